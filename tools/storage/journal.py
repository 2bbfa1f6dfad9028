"""The journal: each LLM response and tool effect of one message, numbered, so a retried job replays them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tools.storage.database import Connection, Database


@dataclass(frozen=True)
class Entry:
    seq: int
    kind: str
    payload: dict[str, Any]


async def load(conn: Connection, inbox_id: int) -> dict[int, Entry]:
    rows = await conn.fetch("SELECT seq, kind, payload FROM journal WHERE inbox_id = $1 ORDER BY seq", inbox_id)
    return {int(r["seq"]): Entry(int(r["seq"]), r["kind"], r["payload"]) for r in rows}


async def get(conn: Connection, inbox_id: int, seq: int) -> Entry | None:
    row = await conn.fetchrow("SELECT seq, kind, payload FROM journal WHERE inbox_id = $1 AND seq = $2", inbox_id, seq)
    return None if row is None else Entry(int(row["seq"]), row["kind"], row["payload"])


async def record(
    conn: Connection, *, household_id: int, inbox_id: int, seq: int, kind: str, payload: dict[str, Any]
) -> None:
    """Insert an entry. A concurrent run that got there first raises UniqueViolationError, which rolls back
    the caller's transaction — and with it the duplicate effect."""
    await conn.execute(
        "INSERT INTO journal (household_id, inbox_id, seq, kind, payload) VALUES ($1, $2, $3, $4, $5)",
        household_id,
        inbox_id,
        seq,
        kind,
        payload,
    )


async def record_alone(
    db: Database, *, household_id: int, user_id: int | None, inbox_id: int, seq: int, kind: str, payload: dict[str, Any]
) -> None:
    """`record` in a transaction of its own, in one round trip (faa_journal_step), for an entry that goes with no
    other write. Its commit does not wait for the disk, as with `Database.household(durable=False)`."""
    async with db.pool.acquire() as conn:
        await conn.execute(
            "SELECT faa_journal_step($1, $2, $3, $4, $5, $6)", household_id, user_id, inbox_id, seq, kind, payload
        )


async def last_undoable(conn: Connection, household_id: int, user_id: int, before_inbox_id: int) -> list[Entry]:
    """The tool writes of the member's latest message before `before_inbox_id` that changed something and has not
    been undone (an undo's result names the message it undid), newest first; empty when there is none."""
    rows = await conn.fetch(
        """WITH undone AS (
               SELECT (j.payload -> 'result' ->> 'undid_message')::bigint AS inbox_id FROM journal j
               WHERE j.household_id = $1 AND j.kind = 'tool' AND j.payload ->> 'tool' = 'undo'),
           target AS (
               SELECT i.id FROM inbox i
               WHERE i.household_id = $1 AND i.user_id = $2 AND i.id < $3
                 AND i.id NOT IN (SELECT inbox_id FROM undone WHERE inbox_id IS NOT NULL)
                 AND EXISTS (SELECT FROM journal j WHERE j.inbox_id = i.id AND j.kind = 'tool'
                             AND j.payload ->> 'writes' = 'true' AND j.payload ->> 'tool' <> 'undo')
               ORDER BY i.id DESC LIMIT 1)
           SELECT j.inbox_id, j.seq, j.kind, j.payload FROM journal j JOIN target t ON t.id = j.inbox_id
           WHERE j.kind = 'tool' AND j.payload ->> 'writes' = 'true'
           ORDER BY j.seq DESC""",
        household_id,
        user_id,
        before_inbox_id,
    )
    return [Entry(int(r["seq"]), r["kind"], {**r["payload"], "inbox_id": int(r["inbox_id"])}) for r in rows]
