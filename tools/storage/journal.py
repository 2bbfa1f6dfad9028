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
