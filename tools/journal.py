"""The journal: each LLM response and tool effect of one message, numbered, so a retried job replays them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tools.database import Connection


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
