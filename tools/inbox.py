"""The inbox: every accepted message, stored before the sender hears 2xx, unique per channel + external id."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tools.database import Connection, Database
from tools.errors import StorageError

_COLUMNS = (
    "id, household_id, user_id, channel, external_id, text, payload, status, attempts, error, trace_id, received_at"
)


@dataclass(frozen=True)
class InboxRow:
    id: int
    household_id: int
    user_id: int
    channel: str
    external_id: str
    text: str
    payload: dict[str, Any]
    status: str
    attempts: int
    error: str | None
    trace_id: str
    received_at: datetime


# One statement in its own implicit transaction: the household is set (transaction-local) by the CTE that the
# INSERT reads from, so row-level security checks the row against it. One round trip instead of four (BEGIN,
# set_config, INSERT, COMMIT) on the path every webhook waits for.
_ACCEPT = f"""
    WITH scope AS MATERIALIZED (
        SELECT set_config('app.household_id', $1::bigint::text, true),
               set_config('app.user_id', $2::bigint::text, true))
    INSERT INTO inbox (household_id, user_id, channel, external_id, text, payload, trace_id)
    SELECT $1, $2, $3, $4, $5, $6, $7 FROM scope
    ON CONFLICT (channel, external_id) DO NOTHING
    RETURNING {_COLUMNS}"""


async def accept(
    db: Database,
    *,
    household_id: int,
    user_id: int,
    channel: str,
    external_id: str,
    text: str,
    trace_id: str,
    payload: dict[str, Any] | None = None,
) -> tuple[InboxRow, bool]:
    """Store a message once (committed when this returns); a redelivery returns the stored row and `False`."""
    async with db.pool.acquire() as conn:
        row = await conn.fetchrow(_ACCEPT, household_id, user_id, channel, external_id, text, payload or {}, trace_id)
    if row is not None:
        return InboxRow(**dict(row)), True
    async with db.household(household_id, user_id) as conn:
        existing = await conn.fetchrow(
            f"SELECT {_COLUMNS} FROM inbox WHERE channel = $1 AND external_id = $2", channel, external_id
        )
    if existing is None:
        # The id is taken by a row this household cannot see: refuse rather than reveal or merge.
        raise StorageError(f"message id {external_id!r} on {channel} is already used")
    return InboxRow(**dict(existing)), False


async def get(conn: Connection, inbox_id: int) -> InboxRow | None:
    row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM inbox WHERE id = $1", inbox_id)
    return None if row is None else InboxRow(**dict(row))


async def claim(conn: Connection, inbox_id: int) -> InboxRow | None:
    """Mark a queued (or interrupted) message as processing; `None` when it is already finished."""
    row = await conn.fetchrow(
        f"""UPDATE inbox SET status = 'processing', attempts = attempts + 1, updated_at = now()
            WHERE id = $1 AND status IN ('queued', 'processing')
            RETURNING {_COLUMNS}""",
        inbox_id,
    )
    return None if row is None else InboxRow(**dict(row))


async def finish(conn: Connection, inbox_id: int, *, status: str, error: str | None = None) -> bool:
    """Close the message; `False` if another run closed it first (the caller must roll back its reply)."""
    result = await conn.execute(
        """UPDATE inbox SET status = $2, error = $3, updated_at = now(), completed_at = now()
           WHERE id = $1 AND status IN ('queued', 'processing')""",
        inbox_id,
        status,
        error,
    )
    return result.endswith(" 1")


async def touch(conn: Connection, inbox_id: int) -> None:
    """Note that the sweeper re-enqueued the message, so it is not re-enqueued again at once."""
    await conn.execute("UPDATE inbox SET updated_at = now() WHERE id = $1", inbox_id)


async def stale(conn: Connection, status: str, older_than_s: float, limit: int = 100) -> list[tuple[int, int]]:
    """(inbox id, household id) of messages in `status` untouched for a while, across households."""
    rows = await conn.fetch(
        "SELECT id, household_id FROM faa_stale_inbox($1, make_interval(secs => $2), $3)", status, older_than_s, limit
    )
    return [(int(r["id"]), int(r["household_id"])) for r in rows]
