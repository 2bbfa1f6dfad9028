"""A member's "forget everything about me": their private rows go, their household entries stay under no name.

The `users` row stays, renamed "former member" and marked forgotten with no way in (identities, sessions, invites
and API token removed): the household's entries, and the reply to the very message that asked, still point at
it."""

from __future__ import annotations

from dataclasses import dataclass

from tools.storage.database import Connection

FORMER_MEMBER = "former member"


@dataclass(frozen=True)
class Forgotten:
    private_memories: int
    anonymised_memories: int
    reminders: int
    events: int
    identities: int


async def forget_member(conn: Connection, household_id: int, user_id: int, keep_inbox_id: int | None) -> Forgotten:
    """Remove a member's private data and anonymise what they wrote for the household, in the caller's transaction.
    `keep_inbox_id` is the message being answered (its reply still has to go out)."""
    # Their private memories are visible to them only: this transaction acts as them.
    await conn.execute("SELECT set_config('app.user_id', $1, true)", str(user_id))
    args = (household_id, user_id)
    private = await _count(
        conn, "DELETE FROM memories WHERE household_id = $1 AND author_id = $2 AND visibility = 'private'", *args
    )
    anonymised = await _count(
        conn, "UPDATE memories SET author_id = NULL WHERE household_id = $1 AND author_id = $2", *args
    )
    await conn.execute(
        """UPDATE reminders SET recipient_ids = array_remove(recipient_ids, $2)
           WHERE household_id = $1 AND $2 = ANY (recipient_ids)""",
        *args,
    )
    reminders = await _count(
        conn,
        """DELETE FROM reminders WHERE household_id = $1
           AND ((NOT for_household AND cardinality(recipient_ids) = 0) OR (created_by = $2 AND for_household))""",
        *args,
    )
    await conn.execute("UPDATE reminders SET created_by = NULL WHERE household_id = $1 AND created_by = $2", *args)
    events = await _count(conn, "DELETE FROM events WHERE household_id = $1 AND member_id = $2", *args)
    await conn.execute("UPDATE events SET created_by = NULL WHERE household_id = $1 AND created_by = $2", *args)
    identities = await _count(conn, "DELETE FROM user_identities WHERE household_id = $1 AND user_id = $2", *args)
    await conn.execute("DELETE FROM web_sessions WHERE household_id = $1 AND user_id = $2", *args)
    await conn.execute("DELETE FROM invites WHERE household_id = $1 AND user_id = $2", *args)
    await conn.execute("DELETE FROM pending_clarifications WHERE household_id = $1 AND user_id = $2", *args)
    await _forget_messages(conn, household_id, user_id, keep_inbox_id)
    await conn.execute(
        """UPDATE users SET name = $3, api_token_hash = NULL, quiet_start = NULL, quiet_end = NULL,
                            forgotten_at = now()
           WHERE household_id = $1 AND id = $2""",
        household_id,
        user_id,
        await _anonymous_name(conn, household_id),
    )
    return Forgotten(private, anonymised, reminders, events, identities)


async def _forget_messages(conn: Connection, household_id: int, user_id: int, keep_inbox_id: int | None) -> None:
    """What they wrote and what was sent to them: message texts blanked, traces and queued notifications gone."""
    keep = keep_inbox_id or 0
    await conn.execute(
        "UPDATE inbox SET text = '', payload = '{}' WHERE household_id = $1 AND user_id = $2 AND id <> $3",
        household_id,
        user_id,
        keep,
    )
    await conn.execute(
        """DELETE FROM interactions WHERE household_id = $1 AND user_id = $2 AND inbox_id IS DISTINCT FROM $3""",
        household_id,
        user_id,
        keep,
    )
    await conn.execute(
        """DELETE FROM journal j USING inbox i
           WHERE j.inbox_id = i.id AND i.household_id = $1 AND i.user_id = $2 AND i.id <> $3""",
        household_id,
        user_id,
        keep,
    )
    await conn.execute(
        "DELETE FROM outbox WHERE household_id = $1 AND user_id = $2 AND status <> 'sent' AND inbox_id IS NULL",
        household_id,
        user_id,
    )
    await conn.execute(
        """UPDATE outbox SET text = '', payload = '{}'
           WHERE household_id = $1 AND user_id = $2 AND inbox_id IS DISTINCT FROM $3""",
        household_id,
        user_id,
        keep,
    )


async def _anonymous_name(conn: Connection, household_id: int) -> str:
    taken = await conn.fetchval(
        "SELECT count(*) FROM users WHERE household_id = $1 AND forgotten_at IS NOT NULL", household_id
    )
    return FORMER_MEMBER if not taken else f"{FORMER_MEMBER} {taken + 1}"


async def _count(conn: Connection, statement: str, *args: object) -> int:
    status = await conn.execute(statement, *args)
    return int(status.rsplit(" ", 1)[-1])
