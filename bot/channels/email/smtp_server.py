"""An SMTP receiver for self-hosting (aiosmtpd): mail for our own addresses goes the webhook's way.

aiosmtpd's `Controller` runs the server in a thread with its own event loop; our handler needs the process's
database pool and Redis client, which belong to the main loop, so the same `SMTP` protocol is served with
`loop.create_server` in the main loop instead. RCPT accepts only EMAIL_ADDRESS and EMAIL_ALIASES (we are no
open relay); DATA takes the raw bytes through `EmailInbound.take`.

Lines may be as long as a whole message may be: RFC 5321 caps them at 1,000 bytes and aiosmtpd answers a longer
one with a permanent 500, but real mail has them (HTML on one line, unwrapped text from web forms), and a
refused family message is lost for good.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import structlog
from aiosmtpd.smtp import SMTP, Envelope, Session

from bot.channels.email.inbound import EmailInbound, Refusal

log = structlog.get_logger()


class InboundHandler:
    """aiosmtpd handler hooks."""

    def __init__(self, inbound: EmailInbound) -> None:
        self.inbound = inbound

    async def handle_RCPT(  # noqa: N802 (aiosmtpd's hook name)
        self, server: SMTP, session: Session, envelope: Envelope, address: str, rcpt_options: list[str]
    ) -> str:
        if address.lower() not in self.inbound.deps.settings.email.own_addresses:
            return "550 5.1.1 No such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:  # noqa: N802
        raw = envelope.original_content or b""
        trace_id = uuid.uuid4().hex
        structlog.contextvars.bind_contextvars(trace_id=trace_id)
        try:
            taken = await self.inbound.take(raw, trace_id)
        except Exception as exc:  # whatever failed, the sending server keeps the mail and retries later
            log.error("email.smtp.failed", error=type(exc).__name__)
            return "451 4.3.0 Temporary failure, please try again later"
        finally:
            structlog.contextvars.unbind_contextvars("trace_id")
        if taken.refusal is Refusal.NO_SENDER:
            return "550 5.1.7 The message has no usable From address"
        return "250 Message accepted for delivery"


class LongLineSMTP(SMTP):
    """aiosmtpd's `SMTP` with its documented `line_length_limit` (read when the server is built) set per server."""

    def __init__(self, handler: Any, *, line_length_limit: int, **kwargs: Any) -> None:
        self.line_length_limit = line_length_limit
        super().__init__(handler, **kwargs)


class SmtpReceiver:
    """The listening server; `start` binds (port 0 picks a free one, see `port`), `stop` closes it."""

    def __init__(self, inbound: EmailInbound) -> None:
        self.inbound = inbound
        self.server: asyncio.Server | None = None

    async def start(self) -> None:
        settings = self.inbound.deps.settings.email
        loop = asyncio.get_running_loop()
        handler = InboundHandler(self.inbound)

        def protocol() -> Any:
            return LongLineSMTP(
                handler,
                line_length_limit=settings.smtp_max_bytes,
                data_size_limit=settings.smtp_max_bytes,
                hostname=settings.message_domain,
                ident="FAA",
                loop=loop,
            )

        self.server = await loop.create_server(protocol, settings.smtp_bind, settings.smtp_port or 0)
        log.info("email.smtp.started", host=settings.smtp_bind, port=self.port)

    @property
    def port(self) -> int:
        assert self.server is not None and self.server.sockets
        return int(self.server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
            self.server = None
        await self.inbound.notices.drain()
