"""The outbox: replies and notifications, written in the transaction that finishes their cause."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tools.storage.database import Connection

_COLUMNS = (
    "id, household_id, user_id, inbox_id, channel, recipient, text, payload, status, attempts, last_error, "
    "created_at, sent_at"
)


@dataclass(frozen=True)
class OutboxRow:
    id: int
    household_id: int
    user_id: int
    inbox_id: int | None
    channel: str
    recipient: str
    text: str
    payload: dict[str, Any]
    status: str
    attempts: int
    last_error: str | None
    created_at: datetime
    sent_at: datetime | None


async def add(
    conn: Connection,
    *,
    household_id: int,
    user_id: int,
    channel: str,
    recipient: str,
    text: str,
    inbox_id: int | None = None,
    payload: dict[str, Any] | None = None,
    not_before: datetime | None = None,
) -> int | None:
    """Queue a message (delivered from `not_before` on, default at once); `None` when the inbox message already
    has its reply (at most one per message)."""
    value = await conn.fetchval(
        """INSERT INTO outbox (household_id, user_id, inbox_id, channel, recipient, text, payload, next_attempt_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, coalesce($8, now()))
           ON CONFLICT (inbox_id) WHERE inbox_id IS NOT NULL DO NOTHING
           RETURNING id""",
        household_id,
        user_id,
        inbox_id,
        channel,
        recipient,
        text,
        payload or {},
        not_before,
    )
    return None if value is None else int(value)


async def get(conn: Connection, outbox_id: int) -> OutboxRow | None:
    row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM outbox WHERE id = $1", outbox_id)
    return None if row is None else OutboxRow(**dict(row))


async def for_inbox(conn: Connection, inbox_id: int) -> OutboxRow | None:
    row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM outbox WHERE inbox_id = $1", inbox_id)
    return None if row is None else OutboxRow(**dict(row))


async def start_sending(conn: Connection, outbox_id: int, *, stale_after_s: float) -> OutboxRow | None:
    """Mark a row 'sending' and count the attempt, before the reply is handed to its channel (commit before
    sending); `None` if it is sent, failed, or being sent — unless that sending began over `stale_after_s` ago
    and was never recorded (its process died)."""
    row = await conn.fetchrow(
        f"""UPDATE outbox SET status = 'sending', attempts = attempts + 1, next_attempt_at = now()
            WHERE id = $1 AND (status = 'pending'
                               OR status = 'sending' AND next_attempt_at < now() - make_interval(secs => $2))
            RETURNING {_COLUMNS}""",
        outbox_id,
        stale_after_s,
    )
    return None if row is None else OutboxRow(**dict(row))


async def mark_sent(conn: Connection, outbox_id: int) -> None:
    await conn.execute("UPDATE outbox SET status = 'sent', sent_at = now() WHERE id = $1", outbox_id)


async def mark_attempt_failed(conn: Connection, outbox_id: int, error: str, *, retry_in: timedelta | None) -> None:
    """Record a failed delivery (the attempt counted when sending began): retried after `retry_in`, or failed for
    good when `retry_in` is None."""
    if retry_in is None:
        await conn.execute(
            "UPDATE outbox SET status = 'failed', last_error = $2 WHERE id = $1",
            outbox_id,
            error[:1000],
        )
    else:
        await conn.execute(
            """UPDATE outbox SET status = 'pending', last_error = $2, next_attempt_at = now() + $3
               WHERE id = $1""",
            outbox_id,
            error[:1000],
            retry_in,
        )


async def due(
    conn: Connection, older_than_s: float, sending_older_than_s: float, limit: int = 100
) -> list[tuple[int, int]]:
    """(outbox id, household id) of rows whose delivery is overdue, across households: pending ones, and ones
    whose sending was never recorded."""
    rows = await conn.fetch(
        """SELECT id, household_id
           FROM faa_due_outbox(make_interval(secs => $1), make_interval(secs => $2), $3)""",
        older_than_s,
        sending_older_than_s,
        limit,
    )
    return [(int(r["id"]), int(r["household_id"])) for r in rows]


async def notifications(
    conn: Connection, user_id: int, *, since: datetime | None = None, limit: int = 50
) -> list[OutboxRow]:
    """The member's notification feed, newest first: delivered messages that answer no message of theirs
    (reminders, digests), delivered after `since`; not the push messages that told of them. Ordered by delivery,
    so one held back by quiet hours is not hidden behind newer ones a client has already seen."""
    rows = await conn.fetch(
        f"""SELECT {_COLUMNS} FROM outbox
            WHERE user_id = $1 AND inbox_id IS NULL AND source_id IS NULL AND status = 'sent'
              AND ($2::timestamptz IS NULL OR sent_at > $2)
            ORDER BY sent_at DESC, id DESC LIMIT $3""",
        user_id,
        since,
        limit,
    )
    return [OutboxRow(**dict(row)) for row in rows]


async def last_sent(conn: Connection, user_id: int, channel: str, recipient: str) -> OutboxRow | None:
    """The latest message delivered to this recipient on this channel (what a numbered answer refers to)."""
    row = await conn.fetchrow(
        f"""SELECT {_COLUMNS} FROM outbox WHERE user_id = $1 AND channel = $2 AND recipient = $3 AND status = 'sent'
            ORDER BY sent_at DESC, id DESC LIMIT 1""",
        user_id,
        channel,
        recipient,
    )
    return None if row is None else OutboxRow(**dict(row))


@dataclass(frozen=True)
class Exchange:
    """One message of a member and the reply to it (none yet while it is being answered)."""

    inbox_id: int
    channel: str
    text: str
    received_at: datetime
    reply: str | None
    payload: dict[str, Any]
    replied_at: datetime | None = None
    attachments: list[dict[str, Any]] = field(default_factory=list)  # what came with the message (engine Attachment)


async def conversation(conn: Connection, household_id: int, user_id: int, *, limit: int = 30) -> list[Exchange]:
    """The member's latest messages on every channel with their replies, oldest first."""
    rows = await conn.fetch(
        """SELECT i.id AS inbox_id, i.channel, i.text, i.received_at, o.text AS reply,
                  coalesce(o.payload, '{}'::jsonb) AS payload, o.created_at AS replied_at,
                  coalesce(i.payload->'attachments', '[]'::jsonb) AS attachments
           FROM inbox i LEFT JOIN outbox o ON o.inbox_id = i.id
           WHERE i.household_id = $1 AND i.user_id = $2
           ORDER BY i.received_at DESC, i.id DESC LIMIT $3""",
        household_id,
        user_id,
        limit,
    )
    return [Exchange(**dict(row)) for row in reversed(rows)]
