"""Media: bytes that came with a message (photos, files) or were made for a reply (charts), per household (RLS)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tools.storage.database import Connection

# The largest file kept: what the largest mail provider delivers in one message (Mailgun, 25 MB). The channels'
# own limit (`CHANNEL_ATTACHMENT_MAX_BYTES`) may not exceed it, so a file a channel accepted is always stored.
MAX_MEDIA_BYTES = 25 * 1024 * 1024
MAX_DESCRIPTION_CHARS = 200  # an image's description in words: an alt text, short enough to be read out


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
    description: str | None = None,
) -> int:
    """Store bytes (with what they show in words, for an image made here); the id goes into an
    `Attachment.media_id` or a reply's `media_ids`."""
    if not data or len(data) > MAX_MEDIA_BYTES:
        raise ValueError(f"media must hold 1 to {MAX_MEDIA_BYTES} bytes, not {len(data)}")
    if description is not None and len(description) > MAX_DESCRIPTION_CHARS:
        raise ValueError(f"a description holds at most {MAX_DESCRIPTION_CHARS} characters, not {len(description)}")
    media_id = await conn.fetchval(
        """INSERT INTO media (household_id, kind, mime, data, source_inbox_id, expires_at, description)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id""",
        household_id,
        kind,
        mime,
        data,
        source_inbox_id,
        expires_at,
        description,
    )
    return int(media_id)


async def descriptions(conn: Connection, media_ids: list[int]) -> dict[int, str]:
    """What the images of a reply show in words, by id, for those that have a description (charts)."""
    rows = await conn.fetch(
        "SELECT id, description FROM media WHERE id = ANY($1::bigint[]) AND description IS NOT NULL", media_ids
    )
    return {int(row["id"]): str(row["description"]) for row in rows}


async def load(conn: Connection, media_id: int) -> MediaFile | None:
    """The file, if it belongs to the transaction's household and has not expired."""
    row = await conn.fetchrow(
        "SELECT id, kind, mime, data FROM media WHERE id = $1 AND (expires_at IS NULL OR expires_at > now())",
        media_id,
    )
    return None if row is None else MediaFile(row["id"], row["kind"], row["mime"], bytes(row["data"]))


async def load_for_member(conn: Connection, media_id: int, user_id: int) -> MediaFile | None:
    """The file, if the member may open it in their chat: it came with or was made for a message of theirs, or
    with no message at all (a digest's chart). Another member's photo or voice note is not theirs to open, though
    it is of the same household."""
    row = await conn.fetchrow(
        """SELECT m.id, m.kind, m.mime, m.data FROM media m LEFT JOIN inbox i ON i.id = m.source_inbox_id
           WHERE m.id = $1 AND (m.expires_at IS NULL OR m.expires_at > now())
             AND (m.source_inbox_id IS NULL OR i.user_id = $2)""",
        media_id,
        user_id,
    )
    return None if row is None else MediaFile(row["id"], row["kind"], row["mime"], bytes(row["data"]))


async def link_to_inbox(conn: Connection, media_ids: list[int], inbox_id: int) -> None:
    """Mark stored bytes as belonging to the inbox message they came with."""
    await conn.execute("UPDATE media SET source_inbox_id = $2 WHERE id = ANY($1::bigint[])", media_ids, inbox_id)


async def discard(conn: Connection, media_ids: list[int]) -> None:
    """Delete bytes stored for a message that was not taken after all (a duplicate, a rate-limited one)."""
    await conn.execute("DELETE FROM media WHERE id = ANY($1::bigint[]) AND source_inbox_id IS NULL", media_ids)
