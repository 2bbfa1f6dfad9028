"""Media: bytes that came with a message (photos, files) or were made for a reply (charts), per household."""

from __future__ import annotations

from tools.database import Connection


async def add(conn: Connection, *, household_id: int, kind: str, mime: str, data: bytes) -> int:
    """Store bytes; the id goes into an `Attachment.media_id` or a reply's `media_ids`."""
    value = await conn.fetchval(
        "INSERT INTO media (household_id, kind, mime, data) VALUES ($1, $2, $3, $4) RETURNING id",
        household_id,
        kind,
        mime,
        data,
    )
    return int(value)


async def link_to_inbox(conn: Connection, media_ids: list[int], inbox_id: int) -> None:
    """Mark stored bytes as belonging to the inbox message they came with."""
    await conn.execute("UPDATE media SET source_inbox_id = $2 WHERE id = ANY($1::bigint[])", media_ids, inbox_id)


async def discard(conn: Connection, media_ids: list[int]) -> None:
    """Delete bytes stored for a message that was not taken after all (a duplicate, a rate-limited one)."""
    await conn.execute("DELETE FROM media WHERE id = ANY($1::bigint[]) AND source_inbox_id IS NULL", media_ids)


async def load(conn: Connection, media_id: int) -> tuple[str, bytes] | None:
    """(mime, bytes) of one item of the household set on the connection; `None` when there is no such item."""
    row = await conn.fetchrow("SELECT mime, data FROM media WHERE id = $1", media_id)
    return None if row is None else (str(row["mime"]), bytes(row["data"]))
