"""The chat page: the member's conversation with FAA (every channel's), a message streamed over the web API's
SSE event protocol, the charts of replies, and a form fallback for browsers without JavaScript."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.channels import intake
from bot.channels.live import follow_events
from bot.channels.web import CHANNEL
from bot.web.pages import uploads
from bot.web.pages.i18n import Catalog
from bot.web.pages.render import VIEWER, html, redirect, texts
from bot.web.pages.security import DEPS
from bot.web.pages.tooling import invalid, json_error, row_id
from engine.deps import Deps
from tools.storage import inbox, media, outbox
from tools.storage.inbox import InboxRow
from tools.storage.web_sessions import SessionMember

HISTORY_TURNS = 30
# The tools whose steps the chat names in plain words while FAA works ("Saving your expense…"); any other is "other";
# and the reading of a photo, voice note or file sent with the message, named until the first step comes.
STEP_TOOLS = (
    "store", "store_expense", "search", "aggregate", "update_memory_fields", "forget", "restore", "schedule_reminder",
    "list_reminders", "cancel_reminder", "snooze_reminder", "complete_reminder", "set_quiet_hours", "add_event",
    "list_events", "move_event", "cancel_event", "remind_before_event", "forget_me", "add_list_items", "show_list",
    "update_list_item", "remove_list_item", "clear_done_items", "set_budget", "budget_status", "render_chart", "undo",
    "other",
    "read_photo", "hear_voice", "read_file",  # what comes with a message is read first (preprocess)
)  # fmt: skip


def step_texts(t: Catalog) -> str:
    """The plain-language step line of each tool, as the JSON the chat script reads."""
    return json.dumps({name: t(f"step.{name}") for name in STEP_TOOLS}, ensure_ascii=False)


def stamp(t: Catalog, instant: datetime, now: datetime, zone: str) -> str:
    """When a message was sent, on the member's clock: "14:05" today, "yesterday 14:05", else "2026-12-03 14:05"."""
    tz = ZoneInfo(zone)
    local, today = instant.astimezone(tz), now.astimezone(tz).date()
    clock = local.strftime("%H:%M")
    if local.date() == today:
        return clock
    if local.date() == today - timedelta(days=1):
        return f"{t('chat.yesterday')} {clock}"
    return f"{local.date().isoformat()} {clock}"


@dataclass(frozen=True)
class Turn:
    """A message of the history with when it was sent and when FAA answered it, on the member's clock."""

    exchange: outbox.Exchange
    sent: str
    answered: str


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=16_000)
    client_message_id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")


async def chat_page(request: web.Request) -> web.Response:
    viewer = request[VIEWER]
    async with request.app[DEPS].db.household(viewer.household_id, viewer.user_id) as conn:
        history = await outbox.conversation(conn, viewer.household_id, viewer.user_id, limit=HISTORY_TURNS)
        described = await media.descriptions(conn, [m for turn in history for m in _media_ids(turn.payload)])
    t, now = texts(request), request.app[DEPS].clock.now()
    turns = [
        Turn(
            turn,
            stamp(t, turn.received_at, now, viewer.timezone),
            stamp(t, turn.replied_at, now, viewer.timezone) if turn.replied_at else "",
        )
        for turn in history
    ]
    return html(request, "chat.html", history=turns, steps=step_texts(t), described=described)


async def _accept(
    request: web.Request, text: str, client_id: str, *, stream: bool, files: tuple[uploads.Upload, ...] = ()
) -> tuple[InboxRow, bool]:
    deps, viewer = request.app[DEPS], request[VIEWER]
    async with uploads.stored(deps, viewer.principal, files) as kept:
        payload: dict[str, Any] = {"stream": True} if stream else {}
        if kept.attachments:
            payload["attachments"] = kept.payload()
        row, created = await intake.accept(
            deps,
            viewer.principal,
            channel=CHANNEL,
            external_id=f"{viewer.user_id}:{client_id}",
            text=text,
            trace_id=uuid.uuid4().hex,
            payload=payload,
            enqueue=False,
        )
        if created:
            kept.inbox_id = row.id
    return row, created


async def _message(request: web.Request) -> tuple[ChatMessage, tuple[uploads.Upload, ...]]:
    """The message of a POST to the stream: JSON `{text, client_message_id}`, or multipart/form-data with those
    fields and the files that come with it (then the text may be empty)."""
    if request.content_type != "multipart/form-data":
        try:
            return ChatMessage.model_validate_json(await request.read()), ()
        except ValidationError:
            raise web.HTTPBadRequest(reason="Send JSON like {text, client_message_id}") from None
    t = texts(request)
    form = await uploads.read_form(request, request.app[DEPS].settings.channel, t)
    if not form.text and not form.files:
        raise uploads.Refused(400, t("chat.empty"))
    try:
        # A message of files alone has no text: the engine reads what the files say.
        message = ChatMessage(text=form.text or "-", client_message_id=form.client_message_id)
    except ValidationError as exc:
        raise uploads.Refused(400, invalid(exc)) from None
    return message.model_copy(update={"text": form.text}), form.files


async def _reply(deps: Deps, viewer: SessionMember, inbox_id: int) -> dict[str, Any] | None:
    async with deps.db.household(viewer.household_id, viewer.user_id) as conn:
        row = await outbox.for_inbox(conn, inbox_id)
        if row is None:
            return None
        media_ids = _media_ids(row.payload)
        described = await media.descriptions(conn, media_ids)
    return {
        "reply": row.text,
        "outcome": row.payload.get("outcome"),
        "options": row.payload.get("options") or [],
        "media": [_media(m, described.get(m)) for m in media_ids],
    }


def _media_ids(payload: dict[str, Any]) -> list[int]:
    """The images a reply carries (charts)."""
    return [int(m) for m in payload.get("media_ids") or []]


def _media(media_id: int, description: str | None) -> dict[str, Any]:
    """A reply's image as the chat script shows it: its link, and what it shows in words (a chart's) if known."""
    shown: dict[str, Any] = {"id": media_id, "url": f"/app/media/{media_id}"}
    if description is not None:
        shown["description"] = description
    return shown


async def stream(request: web.Request) -> web.StreamResponse:
    """POST /app/chat/stream: the message's events as server-sent events, as POST /v1/messages/stream sends them;
    `stream_end` also carries the stored reply with its options and charts (`{id, url, description}`: what a chart
    shows in words is its alt text). The message is JSON, or multipart/form-data when photos, voice notes or files
    come with it (`bot.web.pages.uploads`); one refused comes back as a JSON error before anything is stored."""
    deps = request.app[DEPS]
    viewer = request[VIEWER]
    try:
        body, files = await _message(request)
    except uploads.Refused as exc:
        return json_error(exc.status, "refused", exc.reason)
    row, created = await _accept(request, body.text, body.client_message_id, stream=True, files=files)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)

    async def send(kind: str, data: dict[str, Any]) -> None:
        # A lone surrogate (a model can write one as a JSON escape) has no UTF-8: it goes out as that JSON escape.
        event = f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
        await response.write(event.encode(errors="backslashreplace"))

    async with follow_events(deps.redis, row.id) as events:
        if created:
            await intake.enqueue_inbound(deps, row)
        reply = await _reply(deps, viewer, row.id)  # a resent message may be answered already
        try:
            async with asyncio.timeout(deps.settings.engine.max_seconds + 30):
                if reply is None:
                    async for event in events:
                        if event["type"] == "stream_end":
                            break
                        await send(event["type"], event.get("data", {}))
                    reply = await _reply(deps, viewer, row.id)
            await send("stream_end", {"message_id": row.id, **(reply or {})})
        except TimeoutError:
            await send("error", {"message": texts(request)("chat.later")})
    await response.write_eof()
    return response


async def reply(request: web.Request) -> web.Response:
    """GET /app/chat/replies/{inbox_id}: the reply to one of the member's messages that was still being answered
    when the chat was opened (`{reply, outcome, options, media}`, as `stream_end` carries it), waited for up to
    WEB_REPLY_WAIT_S; 204 when it is not there yet (the page asks again)."""
    deps, viewer = request.app[DEPS], request[VIEWER]
    inbox_id = row_id(request, "inbox_id")
    async with deps.db.household(viewer.household_id, viewer.user_id) as conn:
        message = await inbox.get(conn, inbox_id)
    if message is None or message.user_id != viewer.user_id:
        raise web.HTTPNotFound()
    try:
        async with asyncio.timeout(deps.settings.web.reply_wait_s):
            while (answer := await _reply(deps, viewer, inbox_id)) is None:
                await asyncio.sleep(0.5)
    except TimeoutError:
        return web.Response(status=204)
    return web.json_response({"message_id": inbox_id, **answer})


async def send_form(request: web.Request) -> web.Response:
    """POST /chat without JavaScript: accept the message, wait for its reply a while, show the chat again."""
    deps = request.app[DEPS]
    text = str((await request.post()).get("text", "")).strip()
    if not 1 <= len(text) <= 16_000:
        raise web.HTTPBadRequest(reason="Write a message first")
    row, created = await _accept(request, text, uuid.uuid4().hex, stream=False)
    if created:
        await intake.enqueue_inbound(deps, row)
    try:
        async with asyncio.timeout(deps.settings.web.reply_wait_s):
            while await _reply(deps, request[VIEWER], row.id) is None:
                await asyncio.sleep(0.25)
    except TimeoutError:
        pass  # the history shows it as pending; a reload shows the reply
    return redirect("/")


async def media_file(request: web.Request) -> web.Response:
    """GET /app/media/{id}: a reply's chart, or a photo, voice note or file the member sent, read under the
    household's RLS and only from the member's own messages."""
    viewer = request[VIEWER]
    try:
        media_id = int(request.match_info["media_id"])
    except ValueError:
        raise web.HTTPNotFound() from None
    if not 0 < media_id < 2**63:
        raise web.HTTPNotFound()
    async with request.app[DEPS].db.household(viewer.household_id, viewer.user_id) as conn:
        item = await media.load_for_member(conn, media_id, viewer.user_id)
    if item is None:
        raise web.HTTPNotFound()
    headers = {"Cache-Control": "private, max-age=86400", "Content-Security-Policy": "sandbox"}
    if item.mime.split("/", 1)[0] not in ("image", "audio"):
        headers["Content-Disposition"] = "attachment"  # a file is downloaded, never shown as a page of this site
    return web.Response(body=item.data, content_type=item.mime, headers=headers)
