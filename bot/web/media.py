"""Signed, expiring links to stored media: `GET /media/{id}?h=<household>&e=<expiry>&s=<signature>`.

The signature is an HMAC-SHA256 (MEDIA_SECRET) over media id, household and expiry, so a link opens exactly one
image of one household until it expires; the household in the link also scopes the database read (RLS), so even
a link signed by mistake for the wrong household finds nothing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from engine.deps import Deps
from engine.settings import MediaSettings
from tools.storage import media

_PATH = "/media/{media_id}"
_BIGINT_END = 2**63  # ids are PostgreSQL bigints


def signature(secret: str, media_id: int, household_id: int, expires: int) -> str:
    message = f"{int(media_id)}.{int(household_id)}.{int(expires)}".encode()
    digest = hmac.new(secret.encode(), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def media_link(settings: MediaSettings, media_id: int, household_id: int, *, now: float | None = None) -> str | None:
    """A link that opens this image for MEDIA_LINK_TTL_S seconds; `None` when no MEDIA_SECRET is set."""
    if settings.secret is None:
        return None
    expires = int((time.time() if now is None else now) + settings.link_ttl_s)
    query = urlencode(
        {
            "h": household_id,
            "e": expires,
            "s": signature(settings.secret.get_secret_value(), media_id, household_id, expires),
        }
    )
    path = _PATH.format(media_id=int(media_id)) + "?" + query
    return (settings.base_url or "").rstrip("/") + path


def media_links(
    settings: MediaSettings, media_ids: Any, household_id: int, described: Mapping[int, str] | None = None
) -> list[dict[str, Any]]:
    """`[{"id": …, "url": …, "description": …}]` for a reply's media: no `url` when links are off, a `description`
    (what a chart shows, in words) where `described` has one; bad ids are skipped."""
    found = []
    for media_id in ids(media_ids):
        link = media_link(settings, media_id, household_id)
        item: dict[str, Any] = {"id": media_id} if link is None else {"id": media_id, "url": link}
        if described and media_id in described:
            item["description"] = described[media_id]
        found.append(item)
    return found


def ids(media_ids: Any) -> list[int]:
    """The valid ids of a reply's media (a payload's `media_ids`)."""
    return [media_id for media_id in media_ids or () if isinstance(media_id, int)]


def check_link(settings: MediaSettings, media_id: int, query: Any, *, now: float | None = None) -> int:
    """The household a link's query grants; HTTPForbidden when it is forged or expired, 404 when links are off or the
    household id is one no row can have."""
    if settings.secret is None:
        raise web.HTTPNotFound()
    try:
        household_id, expires, given = int(query["h"]), int(query["e"]), str(query["s"])
    except (KeyError, ValueError):
        raise web.HTTPForbidden(reason="Invalid link") from None
    expected = signature(settings.secret.get_secret_value(), media_id, household_id, expires)
    if not hmac.compare_digest(expected.encode(), given.encode()):
        raise web.HTTPForbidden(reason="Invalid link")
    if expires < (time.time() if now is None else now):
        raise web.HTTPForbidden(reason="Link expired")
    if not 0 < household_id < _BIGINT_END:
        raise web.HTTPNotFound()  # signed, but no household can have this id
    return household_id


def media_route(deps: Deps) -> web.RouteDef:
    """The `GET /media/{id}` route of the web API."""

    async def get_media(request: web.Request) -> web.Response:
        try:
            media_id = int(request.match_info["media_id"])
        except ValueError:
            raise web.HTTPNotFound() from None
        if not 0 < media_id < _BIGINT_END:
            raise web.HTTPNotFound()
        household_id = check_link(deps.settings.media, media_id, request.query)
        async with deps.db.household(household_id) as conn:
            item = await media.load(conn, media_id)
        if item is None:
            raise web.HTTPNotFound()
        expires = int(request.query["e"])
        return web.Response(
            body=item.data,
            content_type=item.mime,
            headers={
                "Cache-Control": f"private, max-age={max(0, expires - int(time.time()))}",
                "X-Content-Type-Options": "nosniff",
                "Content-Security-Policy": "sandbox",
            },
        )

    return web.get(_PATH, get_media)
