"""Live notifications while a page of the web app is open: `GET /app/events` streams the member's reminders and
digests as server-sent events the moment they are delivered on the web channel (every page's script shows them, and
as a system notification with the Notification API when the member turned those on and the page is not in view).

While the stream is connected the page counts as open (`Presence`): a delivery on the web channel goes out as a push
message too only for a member with no page open.

An event's id is when the notification was delivered: a browser that reconnects (EventSource does so by itself)
sends it back as Last-Event-ID and first gets what it missed meanwhile, from the outbox."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import structlog
from aiohttp import web
from redis.exceptions import RedisError

from bot.channels.live import NotificationHub, Presence, notification
from bot.channels.web import CHANNEL
from bot.web.pages.render import VIEWER
from bot.web.pages.security import DEPS
from engine.deps import Deps
from tools.storage import outbox

log = structlog.get_logger()

HUB = web.AppKey("notification_hub", NotificationHub)
KEEP_ALIVE_S = 25.0  # a comment line this often keeps proxies and phones from closing an idle stream
MISSED = 20  # notifications sent again to a page that reconnects, at most
# A closed page stops counting as open within this long (aiohttp tells a handler of a lost connection only when it
# next writes): something delivered after that goes out as a push.
GONE_CHECK_S = 2.0


def hub_context(deps: Deps) -> Any:
    """The web process's hub, for `app.cleanup_ctx`: started with the app, stopped with it."""

    async def context(app: web.Application) -> AsyncIterator[None]:
        assert deps.redis is not None, "the web process is built with Redis"
        hub = NotificationHub(deps.redis)
        await hub.start()
        app[HUB] = hub
        yield
        await hub.stop()

    return context


async def events(request: web.Request) -> web.StreamResponse:
    """GET /app/events: `event: notification` with `{id, text, kind, …, created_at}` for each notification, from
    the moment the page connects (and those missed since Last-Event-ID), and `event: changed` with `{what}` when
    rows a page shows changed elsewhere (`bot.channels.live.announce_change`)."""
    deps, viewer = request.app[DEPS], request[VIEWER]
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
    presence, page = Presence(deps.redis), secrets.token_hex(8)
    with request.app[HUB].follow(viewer.user_id) as queue:
        await response.prepare(request)
        await response.write(b"retry: 5000\n\n")
        await _mark(presence, viewer.user_id, page)
        marked = time.monotonic()
        since = _since(request.headers.get("Last-Event-ID", ""))
        if since is not None:
            async with deps.db.household(viewer.household_id, viewer.user_id) as conn:
                missed = await outbox.notifications(conn, viewer.user_id, since=since, limit=MISSED)
            for row in reversed(missed):  # oldest first, as they came
                if row.channel == CHANNEL:
                    await _send(response, notification(row))
        written = time.monotonic()
        try:
            while not _gone(request):
                try:
                    async with asyncio.timeout(GONE_CHECK_S):
                        note = await queue.get()
                except TimeoutError:
                    if time.monotonic() - written >= KEEP_ALIVE_S:
                        await response.write(b": still here\n\n")
                        written = time.monotonic()
                else:
                    await (_send_change(response, note) if "changed" in note else _send(response, note))
                    written = time.monotonic()
                if time.monotonic() - marked >= Presence.RENEW_S:
                    await _mark(presence, viewer.user_id, page)
                    marked = time.monotonic()
        except ConnectionResetError:
            pass  # the page was closed or went away: it reconnects with its Last-Event-ID if it comes back
        finally:
            with contextlib.suppress(RedisError, OSError):
                await presence.unmark(viewer.user_id, page)
    return response


def _gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def _mark(presence: Presence, user_id: int, page: str) -> None:
    """Mark the page open; without Redis it is not marked, and the member may get a push while it is open."""
    try:
        await presence.mark(user_id, page)
    except (RedisError, OSError) as exc:
        log.warning("web.presence.unmarked", error=type(exc).__name__)


async def _send(response: web.StreamResponse, note: dict[str, Any]) -> None:
    data = json.dumps(note, ensure_ascii=False)
    event = f"id: {note.get('created_at', '')}\nevent: notification\ndata: {data}\n\n"
    await response.write(event.encode(errors="backslashreplace"))


async def _send_change(response: web.StreamResponse, note: dict[str, Any]) -> None:
    """`event: changed` with `{what}`: rows the page may show changed elsewhere. No id: a reconnecting page reads
    its rows again anyway, and Last-Event-ID stays the last notification's."""
    data = json.dumps({"what": str(note["changed"])})
    await response.write(f"event: changed\ndata: {data}\n\n".encode())


def _since(last_event_id: str) -> datetime | None:
    """The delivery time a reconnecting browser saw last; None for none or anything that is not one."""
    try:
        since = datetime.fromisoformat(last_event_id[:64])
    except ValueError:
        return None
    return since if since.tzinfo is not None else None
