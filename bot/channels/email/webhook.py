"""POST /v1/email/inbound/mime: a Mailgun-style signed webhook carrying the raw MIME message.

Mailgun posts form fields `timestamp`, `token`, `signature` (hex HMAC-SHA256 of timestamp + token under the
webhook signing key) and, for a route URL ending in "mime", the message in `body-mime`. Checks, in order,
before anything is stored: body size (406 over EMAIL_WEBHOOK_MAX_BYTES), signature in constant time (401),
timestamp within the window (401), token not seen before (406).

The body is spooled to a temporary file while it arrives (in memory up to `_IN_MEMORY`, then on disk), so the
largest message a provider delivers (Mailgun: 25 MB) is taken like a small one; the files in it are then kept or
dropped by `bot.channels.attachments`, and the member is told what was dropped.

Status codes follow Mailgun's retry rules: any non-2xx except 406 is retried for about 8 hours, 406 stops the
retries. A bad signature or a stale timestamp answers 401, so a signing key or clock fixed within those hours
still gets the mail in; a replayed token answers 406, because that request was already taken and retrying can
never help. A signed message we cannot use (no From address) answers 406 as well, and so does a body over the
limit: no retry can ever make it fit, and a retryable 413 would only have the provider drop it hours later.
"""

from __future__ import annotations

import asyncio
import email
import email.parser
import email.policy
import hashlib
import hmac
import tempfile
import time
import urllib.parse
import uuid
from email.message import EmailMessage
from typing import IO

import structlog
from aiohttp import web
from redis.exceptions import RedisError

from bot.channels.email.inbound import EmailInbound, Refusal

log = structlog.get_logger()

PATH = "/v1/email/inbound/mime"
INBOUND = web.AppKey("email_inbound", EmailInbound)
_IN_MEMORY = 1024 * 1024  # bytes of a body held in memory; beyond, the spool is a file on disk
_CHUNK = 64 * 1024


def signature(key: str, timestamp: str, token: str) -> str:
    """Mailgun's signature: hex HMAC-SHA256(signing key, timestamp + token)."""
    return hmac.new(key.encode(), f"{timestamp}{token}".encode(), hashlib.sha256).hexdigest()


def _refuse(status: int, code: str, message: str) -> web.Response:
    log.warning("email.webhook.refused", status=status, reason=code)
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


async def receive_mime(request: web.Request) -> web.Response:
    inbound = request.app[INBOUND]
    settings = inbound.deps.settings
    limit = settings.email.webhook_max_bytes
    if request.content_length is not None and request.content_length > limit:
        return _refuse(406, "too_large", f"the body is larger than {limit} bytes; it can never be stored")
    with tempfile.SpooledTemporaryFile(max_size=_IN_MEMORY) as spool:
        if not await _spool(request, spool, limit):
            return _refuse(406, "too_large", f"the body is larger than {limit} bytes; it can never be stored")
        fields = await asyncio.to_thread(_form, request.headers.get("Content-Type", ""), spool)
    timestamp, token, signed = (_ascii(fields, n) for n in ("timestamp", "token", "signature"))
    key = settings.email.webhook_signing_key
    assert key is not None  # the route exists only when the key is set
    expected = signature(key.get_secret_value(), timestamp, token)
    if not (timestamp and token and hmac.compare_digest(expected.encode(), signed.lower().encode())):
        return _refuse(401, "bad_signature", "timestamp, token and a valid signature are required")
    try:
        age = abs(time.time() - float(timestamp))
    except ValueError:
        return _refuse(401, "bad_timestamp", "the timestamp must be seconds since the epoch")
    if age > settings.email.webhook_window_s:
        return _refuse(401, "stale", "the signed timestamp is outside the accepted window; check the clocks")
    raw = fields.get("body-mime")
    if not raw:
        return _refuse(400, "no_mime", "no body-mime field: point the Mailgun route at a URL ending in 'mime'")
    token_key = f"faa:email:token:{hashlib.sha256(token.encode()).hexdigest()}"
    if not await _first_use(inbound, token_key):
        return _refuse(406, "replayed", "this token was already used")
    try:
        taken = await inbound.take(raw, trace_id=_trace_id())
    except BaseException:
        await _forget(inbound, token_key)  # let Mailgun's retry of this very request through
        raise
    if taken.refusal is Refusal.NO_SENDER:
        return _refuse(406, "no_sender", "the message has no usable From address")
    verdict = taken.received.verdict.value if taken.received else taken.refusal.value if taken.refusal else "?"
    return web.json_response({"status": verdict})


def _ascii(fields: dict[str, bytes], name: str) -> str:
    return fields.get(name, b"").decode("ascii", "replace").strip()


async def _spool(request: web.Request, spool: IO[bytes], limit: int) -> bool:
    """The request's body into `spool` as it arrives; False (and the rest unread) once it passes `limit`."""
    size = 0
    async for chunk in request.content.iter_chunked(_CHUNK):
        size += len(chunk)
        if size > limit:
            return False
        spool.write(chunk)
    spool.seek(0)
    return True


def _form(content_type: str, spool: IO[bytes]) -> dict[str, bytes]:
    """Form fields as bytes, exactly as posted: a raw message need not be UTF-8 (aiohttp's `post()` would
    decode text fields strictly and fail on a GBK or Latin-1 body sent as 8-bit)."""
    if content_type.lower().startswith("multipart/form-data"):
        parser = email.parser.BytesFeedParser(policy=email.policy.HTTP)
        parser.feed(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n")
        while chunk := spool.read(_CHUNK):
            parser.feed(chunk)
        container = parser.close()
        fields: dict[str, bytes] = {}
        for part in container.iter_parts() if isinstance(container, EmailMessage) else ():
            name = part.get_param("name", header="content-disposition")
            data = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(data, bytes):
                fields.setdefault(name, data)
        return fields
    pairs = urllib.parse.parse_qsl(spool.read().decode("latin-1"), keep_blank_values=True, encoding="latin-1")
    return {name: value.encode("latin-1") for name, value in reversed(pairs)}


async def _first_use(inbound: EmailInbound, key: str) -> bool:
    """Record the token; `False` when it was already there. With Redis down the check is skipped: the inbox's
    unique Message-ID still keeps a replayed message from being taken twice."""
    window = inbound.deps.settings.email.webhook_window_s
    try:
        return bool(await inbound.deps.redis.set(key, 1, nx=True, ex=2 * window + 60))
    except (RedisError, OSError) as exc:
        log.warning("email.webhook.replay_unchecked", error=type(exc).__name__)
        return True


async def _forget(inbound: EmailInbound, key: str) -> None:
    try:
        await inbound.deps.redis.delete(key)
    except (RedisError, OSError) as exc:
        log.warning("email.webhook.token_kept", error=type(exc).__name__)


def _trace_id() -> str:
    """The trace id the API's middleware bound for this request (a fresh one outside it)."""
    return str(structlog.contextvars.get_contextvars().get("trace_id") or uuid.uuid4().hex)


def add_routes(app: web.Application, inbound: EmailInbound) -> None:
    """Mount the webhook; notices still being sent are awaited when the app shuts down."""
    app[INBOUND] = inbound
    app.add_routes([web.post(PATH, receive_mime)])

    async def drain(app: web.Application) -> None:
        await inbound.notices.drain()

    app.on_cleanup.append(drain)
