"""The web API's member endpoints: POST /v1/messages (and its SSE twin), GET /v1/messages/{id} and
GET /v1/notifications, authenticated by the member's API token."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import structlog
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.channels import intake, rates
from bot.channels.live import ReplyWaiter, follow_events, notification, reply_message
from bot.channels.web import CHANNEL
from bot.web.errors import ApiError
from bot.web.media import ids, media_links
from engine.deps import Deps
from engine.domain import finished_status
from tools.storage import households, inbox, media, outbox
from tools.storage.households import Principal
from tools.storage.inbox import InboxRow

log = structlog.get_logger()

DEPS = web.AppKey("deps", Deps)
WAITER = web.AppKey("waiter", ReplyWaiter)
TOKENS = web.AppKey("tokens", dict)
TOKEN_LOOKUPS = web.AppKey("token_lookups", dict)
TRACE_ID = web.RequestKey("trace_id", str)
_TOKEN_CACHE_S = 60.0  # a revoked token keeps working this long in a running web process


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=16_000)
    client_message_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        pattern=r"^[A-Za-z0-9._:-]+$",
        description="Your id for this message; sending it again never creates a second message.",
    )
    wait: bool = Field(default=True, description="Wait for the reply (up to the server's limit) instead of 202.")


async def _principal(request: web.Request) -> Principal:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise ApiError(401, "unauthorized", "send the member's API token as 'Authorization: Bearer <token>'")
    cache: dict[str, tuple[Principal, float]] = request.app[TOKENS]
    cached = cache.get(token)
    if cached is not None and cached[1] > time.monotonic():
        return cached[0]
    # Requests that miss the cache together share one lookup (a burst right after start: one query, not 200).
    lookups: dict[str, asyncio.Task[Principal | None]] = request.app[TOKEN_LOOKUPS]
    lookup = lookups.get(token)
    if lookup is None:
        lookup = lookups[token] = asyncio.create_task(_resolve_token(request.app[DEPS], token))
        lookup.add_done_callback(lambda _: lookups.pop(token, None))
    principal = await asyncio.shield(lookup)
    if principal is None:
        raise ApiError(401, "unauthorized", "unknown API token")
    if len(cache) > 10_000:
        cache.clear()
    cache[token] = (principal, time.monotonic() + _TOKEN_CACHE_S)
    return principal


async def _resolve_token(deps: Deps, token: str) -> Principal | None:
    async with deps.db.unscoped() as conn:
        return await households.resolve_token(conn, token)


async def _message_in(request: web.Request) -> MessageIn:
    raw = await request.read()
    try:
        return MessageIn.model_validate_json(raw)
    except ValidationError as exc:
        problems = [{"field": ".".join(str(p) for p in e["loc"]), "problem": e["msg"]} for e in exc.errors()]
        raise ApiError(400, "invalid_request", 'the body must be JSON like {"text": "…"}', problems=problems) from None


async def _accept(request: web.Request, body: MessageIn, **kwargs: Any) -> tuple[Any, bool]:
    principal = await _principal(request)
    await _within_rate(request.app[DEPS], principal)
    client_id = body.client_message_id or uuid.uuid4().hex
    return await intake.accept(
        request.app[DEPS],
        principal,
        channel=CHANNEL,
        external_id=f"{principal.user_id}:{client_id}",
        text=body.text,
        trace_id=request[TRACE_ID],
        **kwargs,
    )


async def _within_rate(deps: Deps, principal: Principal) -> None:
    """The chat channels' per-sender limit, per member: over it, 429 with Retry-After; nothing is stored."""
    limit = deps.settings.web.messages_per_minute
    wait = await rates.wait_s(deps, f"faa:web:rate:{principal.user_id}", limit=limit, window_s=60)
    if wait is not None:
        error = ApiError(
            429, "rate_limited", f"more than {limit} messages a minute; send it again later", retry_after_s=wait
        )
        error.headers["Retry-After"] = str(wait)
        raise error


async def _status(deps: Deps, household_id: int, user_id: int, inbox_id: int) -> dict[str, Any] | None:
    """One of the member's own messages; another member's, even in the same household, is not theirs to read."""
    async with deps.db.household(household_id) as conn:
        found = await inbox.with_reply(conn, inbox_id)  # status and reply as of one moment
    if found is None or found[0].user_id != user_id:
        return None
    row, reply = found
    return await _message_body(deps, row, row.status, None if reply is None else reply_message(reply))


async def _message_body(deps: Deps, row: InboxRow, status: str, reply: dict[str, Any] | None) -> dict[str, Any]:
    """A message as the API shows it; `reply` as `bot.channels.live.reply_message` has it (stored or just published),
    its charts with what they show in words."""
    body: dict[str, Any] = {"message_id": row.id, "status": status, "received_at": row.received_at.isoformat()}
    if reply is not None:
        body.update(reply=reply["reply"], outcome=reply.get("outcome"), options=reply.get("options", []))
        media_ids = ids(reply.get("media_ids"))
        described = await _descriptions(deps, row.household_id, media_ids) if media_ids else {}
        body["media"] = media_links(deps.settings.media, media_ids, row.household_id, described)
    return body


async def _descriptions(deps: Deps, household_id: int, media_ids: list[int]) -> dict[int, str]:
    async with deps.db.household(household_id) as conn:
        return await media.descriptions(conn, media_ids)


async def post_message(request: web.Request) -> web.StreamResponse:
    deps = request.app[DEPS]
    body = await _message_in(request)
    wait_s = deps.settings.web.reply_wait_s if body.wait else 0
    row, created = await _accept(request, body, enqueue=False)
    if wait_s == 0:
        if created:
            await intake.enqueue_inbound(deps, row)
        return _accepted(row, created)
    waiter = request.app[WAITER]
    future = waiter.expect(row.id)  # before enqueueing: the reply cannot be published before we listen
    status: dict[str, Any] | None = None
    try:
        if created:
            await intake.enqueue_inbound(deps, row)
        else:  # a redelivery: the first delivery may be answered already
            status = await _status(deps, row.household_id, row.user_id, row.id)
        if status is None or "reply" not in status:
            reply = await asyncio.wait_for(asyncio.shield(future), wait_s)
            status = await _message_body(deps, row, finished_status(reply.get("outcome")), reply)
    except TimeoutError:
        pass
    finally:
        waiter.forget(row.id, future)
    if status is not None and "reply" in status:
        return web.json_response({**status, "duplicate": not created})
    return _accepted(row, created)


def _accepted(row: InboxRow, created: bool) -> web.Response:
    return web.json_response(
        {"message_id": row.id, "status": row.status, "duplicate": not created},
        status=202,
        headers={"Location": f"/v1/messages/{row.id}"},
    )


async def get_message(request: web.Request) -> web.Response:
    principal = await _principal(request)
    try:
        inbox_id = int(request.match_info["message_id"])
    except ValueError:
        raise ApiError(404, "not_found", "no such message") from None
    if not 0 < inbox_id < 2**63:  # past bigint no row exists, and PostgreSQL would refuse the parameter
        raise ApiError(404, "not_found", "no such message")
    status = await _status(request.app[DEPS], principal.household_id, principal.user_id, inbox_id)
    if status is None:
        raise ApiError(404, "not_found", "no such message")
    return web.json_response(status)


async def stream_message(request: web.Request) -> web.StreamResponse:
    deps = request.app[DEPS]
    body = await _message_in(request)
    row, created = await _accept(request, body, payload={"stream": True}, enqueue=False)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)

    async def send(event: dict[str, Any]) -> None:
        data = json.dumps(event.get("data", {}), ensure_ascii=False)
        # A lone surrogate (a model can write one as a JSON escape) has no UTF-8: it goes out as that JSON escape.
        await response.write(f"event: {event['type']}\ndata: {data}\n\n".encode(errors="backslashreplace"))

    async with follow_events(deps.redis, row.id) as events:
        if created:
            await intake.enqueue_inbound(deps, row)
        status = await _status(deps, row.household_id, row.user_id, row.id)
        if status is not None and "reply" in status:
            await send({"type": "content_delta", "data": {"text": status["reply"]}})
            await send({"type": "stream_end", "data": {"message_id": row.id, "outcome": status.get("outcome")}})
        else:
            try:
                async with asyncio.timeout(deps.settings.engine.max_seconds + 30):
                    async for event in events:
                        await send(event)
            except TimeoutError:
                await send({"type": "error", "data": {"message": f"still working; poll GET /v1/messages/{row.id}"}})
    await response.write_eof()
    return response


async def get_notifications(request: web.Request) -> web.Response:
    """The member's notification feed (reminders, digests), newest first; `since` is the last `next_since`."""
    principal = await _principal(request)
    since_text = request.query.get("since")
    try:
        since = datetime.fromisoformat(since_text) if since_text else None
        if since is not None and since.tzinfo is not None:
            since = since.astimezone(UTC)  # a date at the edge of the calendar may have no UTC twin
        limit = int(request.query.get("limit", "50"))
    except (ValueError, OverflowError):
        raise ApiError(400, "invalid_request", "since must be a next_since date-time, limit a number") from None
    if since is not None and since.tzinfo is None:
        raise ApiError(400, "invalid_request", "since needs a UTC offset, as next_since has")
    if not 1 <= limit <= 100:
        raise ApiError(400, "invalid_request", "limit must be between 1 and 100")
    deps = request.app[DEPS]
    async with deps.db.household(principal.household_id, principal.user_id) as conn:
        rows = await outbox.notifications(conn, principal.user_id, since=since, limit=limit)
        described = await media.descriptions(conn, [m for row in rows for m in ids(row.payload.get("media_ids"))])
    newest = rows[0].sent_at if rows else since
    entries = [
        {
            **notification(row),
            "media": media_links(deps.settings.media, row.payload.get("media_ids"), row.household_id, described),
        }
        for row in rows
    ]
    return web.json_response(
        {
            "notifications": entries,
            "next_since": newest.isoformat() if newest is not None else None,
        }
    )


ROUTES = [
    web.post("/v1/messages", post_message),
    web.post("/v1/messages/stream", stream_message),
    web.get("/v1/messages/{message_id}", get_message),
    web.get("/v1/notifications", get_notifications),
]
