"""A member's "forget everything about me": their private rows go, their household entries stay under no name,
and what other members wrote stays exactly as it is — including what mentions them.

Private rows are those only the member could see, and those they kept from another member (a surprise is theirs
too): memories, reminders, events, lists and list items. Their household entries lose their author. The `users`
row stays, renamed "former member" and marked forgotten with no way in (identities, sessions, invites and API token
removed): the household's entries, and the reply to the very message that asked, still point at it; nothing is
delivered to it any more.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.storage.database import Connection, acting_for

FORMER_MEMBER = "former member"
# The member's own rows that only they (or all but one member) could see.
_PRIVATE = "(visibility = 'private' OR hidden_from IS NOT NULL)"


@dataclass(frozen=True)
class Forgotten:
    private_memories: int
    anonymised_memories: int
    reminders: int
    events: int
    identities: int
    lists: int = 0
    list_items: int = 0


async def forget_member(conn: Connection, household_id: int, user_id: int, keep_inbox_id: int | None) -> Forgotten:
    """Remove a member's private data and anonymise what they wrote for the household, in the caller's transaction
    (which may act for another member: the owner removing one). `keep_inbox_id` is the message being answered (its
    reply still has to go out)."""
    # Their private rows are visible to them only: these statements act as them.
    async with acting_for(conn, user_id):
        args = (household_id, user_id)
        private = await _count(
            conn, f"DELETE FROM memories WHERE household_id = $1 AND author_id = $2 AND {_PRIVATE}", *args
        )
        anonymised = await _count(
            conn, "UPDATE memories SET author_id = NULL WHERE household_id = $1 AND author_id = $2", *args
        )
        # Their reminders: the private ones, and those they set for themselves alone; the rest stay, unsigned.
        reminders = await _count(
            conn,
            f"""DELETE FROM reminders WHERE household_id = $1 AND created_by = $2
                AND ({_PRIVATE} OR (NOT for_household AND recipient_ids <@ ARRAY[$2::bigint]))""",
            *args,
        )
        await conn.execute("UPDATE reminders SET created_by = NULL WHERE household_id = $1 AND created_by = $2", *args)
        events = await _count(
            conn, f"DELETE FROM events WHERE household_id = $1 AND created_by = $2 AND {_PRIVATE}", *args
        )
        await conn.execute("UPDATE events SET created_by = NULL WHERE household_id = $1 AND created_by = $2", *args)
        items = await _count(
            conn, f"DELETE FROM list_items WHERE household_id = $1 AND created_by = $2 AND {_PRIVATE}", *args
        )
        await conn.execute("UPDATE list_items SET created_by = NULL WHERE household_id = $1 AND created_by = $2", *args)
        lists = await _count(
            conn, f"DELETE FROM lists WHERE household_id = $1 AND created_by = $2 AND {_PRIVATE}", *args
        )
        await conn.execute("UPDATE lists SET created_by = NULL WHERE household_id = $1 AND created_by = $2", *args)
        await conn.execute("UPDATE budgets SET created_by = NULL WHERE household_id = $1 AND created_by = $2", *args)
        await conn.execute("DELETE FROM budget_alerts WHERE household_id = $1 AND user_id = $2", *args)
        identities = await _count(conn, "DELETE FROM user_identities WHERE household_id = $1 AND user_id = $2", *args)
        await conn.execute("DELETE FROM web_sessions WHERE household_id = $1 AND user_id = $2", *args)
        await conn.execute("DELETE FROM push_subscriptions WHERE household_id = $1 AND user_id = $2", *args)
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
    return Forgotten(private, anonymised, reminders, events, identities, lists, items)


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
