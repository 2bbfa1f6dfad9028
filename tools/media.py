"""Stored media (chart images, later photos and voice notes): household-scoped bytes with a MIME type."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tools.database import Connection

MAX_MEDIA_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class Media:
    id: int
    household_id: int
    kind: str
    mime: str
    data: bytes
    created_at: datetime
    expires_at: datetime | None


async def add(
    conn: Connection,
    *,
    household_id: int,
    kind: str,
    mime: str,
    data: bytes,
    source_inbox_id: int | None = None,
    expires_at: datetime | None = None,
) -> int:
    """Store bytes for the household and return the media id."""
    if not data or len(data) > MAX_MEDIA_BYTES:
        raise ValueError(f"media must hold 1 to {MAX_MEDIA_BYTES} bytes, not {len(data)}")
    return int(
        await conn.fetchval(
            """INSERT INTO media (household_id, kind, mime, data, source_inbox_id, expires_at)
               VALUES ($1, $2, $3, $4, $5, $6) RETURNING id""",
            household_id,
            kind,
            mime,
            data,
            source_inbox_id,
            expires_at,
        )
    )


async def get(conn: Connection, household_id: int, media_id: int) -> Media | None:
    """The household's media row, or `None` when it does not exist, belongs to another household or expired.

    Row-level security already hides other households' rows; the explicit condition is the second lock."""
    row = await conn.fetchrow(
        """SELECT id, household_id, kind, mime, data, created_at, expires_at FROM media
           WHERE id = $1 AND household_id = $2 AND (expires_at IS NULL OR expires_at > now())""",
        media_id,
        household_id,
    )
    return None if row is None else Media(**dict(row))
