"""The Gateway's callback: verify the MAC, open the box, hand the message to the channel gate, answer 200.

Order matters: nothing is parsed beyond the form until the MAC holds and the message is addressed to our ID;
nothing is stored unless the box opens and its content is well formed. A forged or malformed request leaves no
row behind. The sender's public key is normally cached; on a miss it is fetched with a short timeout, and an
unreachable Gateway gets a 503 so that it delivers the callback again later.
"""

from __future__ import annotations

import dataclasses
import re
import time
import uuid
from typing import Any
from urllib.parse import parse_qsl

import structlog
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from redis.exceptions import RedisError

from bot.channels import attachments, numbered
from bot.channels.errors import GatewayError, MalformedMessage
from bot.channels.gate import Incoming, Verdict, receive
from bot.channels.pseudonyms import pseudonym
from bot.channels.threema import CHANNEL, crypto, messages
from bot.channels.threema.fetcher import ref_for
from bot.channels.threema.gateway import GatewayClient
from bot.channels.threema.sender import send_text
from engine.deps import Deps
from engine.domain import Attachment

log = structlog.get_logger()

CALLBACK_PATH = "/threema/callback"

_JOIN = re.compile(r"\s*join\s+(\S.{0,40}?)\s*", re.I | re.S)
_SEEN_TTL_S = 86400  # the Gateway redelivers a failed callback for a few hours at most
_THREEMA_ID = r"^[0-9A-Z*][0-9A-Z]{7}$"


class CallbackForm(BaseModel):
    """The callback's fields, once the MAC over them holds."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    sender: str = Field(alias="from", pattern=_THREEMA_ID)
    to: str = Field(pattern=_THREEMA_ID)
    message_id: str = Field(alias="messageId", pattern=r"^[0-9a-fA-F]{16}$")
    date: int = Field(ge=0, lt=2**40)
    nonce: str = Field(pattern=r"^[0-9a-fA-F]{48}$")
    box: str = Field(pattern=r"^(?:[0-9a-fA-F]{2})+$")
    nickname: str | None = Field(default=None, max_length=64)


class ThreemaCallback:
    """The aiohttp handler for `POST /threema/callback`."""

    def __init__(self, deps: Deps, client: GatewayClient) -> None:
        self._deps = deps
        self._client = client

    async def handle(self, request: web.Request) -> web.Response:
        started = time.monotonic()
        body = await request.read()  # over WEB_MAX_BODY_BYTES: 413 before anything is parsed
        fields = _form(request, body)
        if not crypto.mac_matches(self._client.secret, fields):
            log.warning("threema.callback.rejected", reason="mac")
            raise web.HTTPUnauthorized(text="bad MAC")
        if fields["to"] != self._client.identity:
            log.warning("threema.callback.rejected", reason="recipient")
            raise web.HTTPForbidden(text="not addressed to this Gateway ID")
        try:
            form = CallbackForm.model_validate(fields)
        except ValidationError as exc:
            names = sorted({str(error["loc"][0]) for error in exc.errors()})
            raise web.HTTPBadRequest(text=f"malformed fields: {', '.join(names)}") from None
        if await self._seen(form):
            return web.Response(text="")
        content = await self._open(form)
        verdict = await self._dispatch(form, content)
        await self._mark_seen(form)
        log.info(
            "threema.callback.handled",
            kind=type(content).__name__.lower(),
            verdict=verdict,
            duration_ms=round((time.monotonic() - started) * 1000, 2),
        )
        return web.Response(text="")

    async def _open(self, form: CallbackForm) -> messages.Content:
        try:
            public_key = await self._client.public_key(form.sender)
        except GatewayError as exc:
            if not exc.transient:
                raise web.HTTPBadRequest(text="unknown sender") from None
            log.warning("threema.pubkey.unavailable", error=exc.reason)
            raise web.HTTPServiceUnavailable(text="sender's key unavailable, try again") from None
        try:
            plain = crypto.open_box(
                self._client.private_key, public_key, bytes.fromhex(form.nonce), bytes.fromhex(form.box)
            )
            return messages.parse(crypto.unpad(plain))
        except MalformedMessage as exc:
            log.warning("threema.callback.rejected", reason=exc.reason)
            raise web.HTTPBadRequest(text=exc.reason) from None

    async def _dispatch(self, form: CallbackForm, content: messages.Content) -> str:
        if isinstance(content, messages.Receipt | messages.Unsupported):
            return "ignored"  # receipts confirm our own replies; nothing to answer
        dropped = None if isinstance(content, messages.Text) else _dropped(self._deps, content)
        if dropped is not None and not (isinstance(content, messages.File) and content.caption):
            await self._tell(form.sender, attachments.notice([dropped]))  # nothing else in the message
            return "dropped"
        incoming = await self._incoming(form, content, keep_file=dropped is None)
        received = await receive(self._deps, incoming)
        if received.notice is not None:
            await self._tell(form.sender, received.notice)
        if dropped is not None and received.verdict is Verdict.ACCEPTED:
            await self._tell(form.sender, attachments.notice([dropped]))
        return received.verdict.value

    async def _tell(self, to: str, text: str) -> None:
        try:
            await send_text(self._client, to, text)
        except GatewayError as exc:  # a notice is a courtesy: the message itself was handled
            log.warning("threema.notice.failed", error=exc.reason)

    async def _incoming(
        self, form: CallbackForm, content: messages.Text | messages.Image | messages.File, *, keep_file: bool = True
    ) -> Incoming:
        payload: dict[str, Any] = {"threema": {"message_id": form.message_id.lower(), "date": form.date}}
        join_code = None
        if isinstance(content, messages.Text):
            text = content.text
            if (join := _JOIN.fullmatch(text)) is not None:
                join_code = join.group(1)
            else:
                text, extras = await numbered.resolve_choice(self._deps, CHANNEL, form.sender, text)
                payload.update(extras)
        else:
            text = (content.caption or "") if isinstance(content, messages.File) else ""
            if keep_file:
                payload["attachments"] = [dataclasses.asdict(_attachment(content, form.sender))]
        trace_id = structlog.contextvars.get_contextvars().get("trace_id") or uuid.uuid4().hex
        return Incoming(
            channel=CHANNEL,
            sender=form.sender,
            message_id=f"{form.sender}:{form.message_id.lower()}",  # ids are chosen by each sender
            text=text,
            reply_to=form.sender,
            trace_id=str(trace_id),
            join_code=join_code,
            join_hint="JOIN <code>",
            payload=payload,
        )

    def _seen_key(self, form: CallbackForm) -> str:
        seen = pseudonym(self._deps.settings, CHANNEL, f"{form.sender}:{form.message_id.lower()}")
        return f"faa:threema:seen:{seen}"  # no Threema ID in a key name

    async def _seen(self, form: CallbackForm) -> bool:
        """A redelivery of a callback we already handled (the inbox dedupes too; this also spares the notices)."""
        try:
            return bool(await self._deps.redis.exists(self._seen_key(form)))
        except (RedisError, OSError):
            return False

    async def _mark_seen(self, form: CallbackForm) -> None:
        try:
            await self._deps.redis.set(self._seen_key(form), 1, ex=_SEEN_TTL_S)
        except (RedisError, OSError) as exc:
            log.warning("threema.callback.unmarked", error=type(exc).__name__)


def _form(request: web.Request, body: bytes) -> dict[str, str]:
    if request.content_type != "application/x-www-form-urlencoded":
        raise web.HTTPBadRequest(text="expected a form-encoded body")
    try:
        pairs = parse_qsl(body.decode("ascii"), keep_blank_values=True, strict_parsing=True, max_num_fields=20)
    except (UnicodeDecodeError, ValueError):
        raise web.HTTPBadRequest(text="malformed form body") from None
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise web.HTTPBadRequest(text="repeated form fields")
    return fields


def _dropped(deps: Deps, content: messages.Image | messages.File) -> attachments.Dropped | None:
    """The file when the channels' limits do not keep it (`bot.channels.attachments`)."""
    mime, name = ("image/jpeg", None) if isinstance(content, messages.Image) else (content.mime, content.name)
    reason = attachments.refusal(deps.settings.channel, mime, name, content.size)
    return None if reason is None else attachments.Dropped(name or mime, reason)


def _attachment(content: messages.Image | messages.File, sender: str) -> Attachment:
    ref = ref_for(content, sender)
    if isinstance(content, messages.Image):
        return Attachment(kind="image", mime="image/jpeg", ref=ref)
    kind = "image" if content.mime.startswith("image/") else "voice" if content.mime.startswith("audio/") else "file"
    return Attachment(kind=kind, mime=content.mime, ref=ref, name=content.name)


def install(app: web.Application, deps: Deps) -> None:
    """Add the callback route to the web app, with a Gateway client closed on cleanup."""
    client = GatewayClient(deps.settings.threema, deps.redis)
    app.router.add_post(CALLBACK_PATH, ThreemaCallback(deps, client).handle)

    async def close(app: web.Application) -> None:
        await client.close()

    app.on_cleanup.append(close)
