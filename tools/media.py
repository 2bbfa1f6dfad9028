"""Stored files: photos and documents that came with a message, charts the tools drew. Household-scoped (RLS)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tools.database import Connection


@dataclass(frozen=True)
class MediaFile:
    id: int
    kind: str
    mime: str
    data: bytes


async def save(
    conn: Connection,
    household_id: int,
    *,
    kind: str,
    mime: str,
    data: bytes,
    source_inbox_id: int | None = None,
    expires_at: datetime | None = None,
) -> int:
    media_id = await conn.fetchval(
        """INSERT INTO media (household_id, kind, mime, data, source_inbox_id, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6) RETURNING id""",
        household_id,
        kind,
        mime,
        data,
        source_inbox_id,
        expires_at,
    )
    return int(media_id)


async def load(conn: Connection, media_id: int) -> MediaFile | None:
    """The file, if it belongs to the transaction's household and has not expired."""
    row = await conn.fetchrow(
        "SELECT id, kind, mime, data FROM media WHERE id = $1 AND (expires_at IS NULL OR expires_at > now())",
        media_id,
    )
    return None if row is None else MediaFile(row["id"], row["kind"], row["mime"], bytes(row["data"]))
