"""How much work waits, across households: unfinished inbox messages and undelivered outbox replies (counts only)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tools.storage.database import Connection


@dataclass(frozen=True)
class Backlog:
    inbox: dict[str, int] = field(default_factory=dict)  # status (queued, processing) -> messages
    outbox_pending: int = 0


async def read(conn: Connection) -> Backlog:
    """Counts through a SECURITY DEFINER function: an unscoped connection sees no household's rows."""
    rows = await conn.fetch("SELECT box, status, messages FROM faa_backlog()")
    inbox = {"queued": 0, "processing": 0}
    outbox_pending = 0
    for row in rows:
        if row["box"] == "inbox":
            inbox[row["status"]] = int(row["messages"])
        else:
            outbox_pending += int(row["messages"])
    return Backlog(inbox, outbox_pending)
