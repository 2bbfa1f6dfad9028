"""Stored media (charts, files) as channel senders read them to attach to a reply."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from engine.errors import DeliveryError
from tools.storage import media
from tools.storage.database import Database

LoadMedia = Callable[[int, int], Awaitable[tuple[str, bytes]]]  # (household_id, media_id) -> (mime, bytes)


def media_loader(db: Database) -> LoadMedia:
    """What channel senders read charts and files with; a missing row is a permanent delivery failure."""

    async def load_media(household_id: int, media_id: int) -> tuple[str, bytes]:
        async with db.household(household_id) as conn:
            found = await media.load(conn, media_id)
        if found is None:
            raise DeliveryError(f"media {media_id} is gone", transient=False)
        return found.mime, found.data

    return load_media
