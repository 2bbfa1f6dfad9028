"""Stored media (chart PNGs, photos kept at intake): bytes by id, inside the household's transaction."""

from __future__ import annotations

from tools.database import Connection


async def load(conn: Connection, media_id: int) -> tuple[str, bytes] | None:
    """(mime, bytes) of one media row of the current household; `None` if there is no such row."""
    row = await conn.fetchrow("SELECT mime, data FROM media WHERE id = $1", media_id)
    return None if row is None else (str(row["mime"]), bytes(row["data"]))
