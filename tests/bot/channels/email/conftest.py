"""An SMTP peer (aiosmtpd) that records what FAA sends, and helpers for signed webhook posts."""

from __future__ import annotations

import asyncio
import email
import email.policy
import email.utils
import hashlib
import hmac
import itertools
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

from engine.channel_settings import EmailSettings
from engine.settings import Settings

SIGNING_KEY = "key-test-signing"
FAA_ADDRESS = "faa@family.example"


@dataclass
class Received:
    sender: str
    recipients: list[str]
    message: EmailMessage


@dataclass
class SmtpPeer:
    """A relay that records each message; `answer` scripts the reply to DATA (e.g. "550 5.1.1 no such user")."""

    port: int = 0
    messages: list[Received] = field(default_factory=list)
    answer: str = "250 OK"
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:  # noqa: N802
        if self.answer.startswith("250"):
            message = email.message_from_bytes(envelope.original_content or b"", policy=email.policy.default)
            assert isinstance(message, EmailMessage)
            with self.lock:
                self.messages.append(Received(str(envelope.mail_from), list(envelope.rcpt_tos), message))
        return self.answer

    async def wait_for(self, count: int, timeout_s: float = 20.0) -> list[Received]:
        """The first `count` messages, once they are there (fails after `timeout_s`: they never came)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.messages) >= count:
                    return list(self.messages)
            await asyncio.sleep(0.02)
        raise AssertionError(f"expected {count} messages at the SMTP peer, got {len(self.messages)}")

    async def wait_until(self, found: Callable[[Received], bool], timeout_s: float = 30.0) -> Received:
        """The first message `found` holds true of, once it is there (fails after `timeout_s`: it never came)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                match = next((m for m in self.messages if found(m)), None)
            if match is not None:
                return match
            await asyncio.sleep(0.02)
        raise AssertionError(f"no such message at the SMTP peer among {len(self.messages)}")

    def to(self, address: str) -> list[Received]:
        with self.lock:
            return [m for m in self.messages if address in m.recipients]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def smtp_peer() -> Iterator[SmtpPeer]:
    peer = SmtpPeer(port=_free_port())
    controller = Controller(peer, hostname="127.0.0.1", port=peer.port)
    controller.start()
    try:
        yield peer
    finally:
        controller.stop()


def email_settings(peer: SmtpPeer, **overrides: object) -> EmailSettings:
    values: dict[str, object] = {
        "address": FAA_ADDRESS,
        "webhook_signing_key": SIGNING_KEY,
        "relay_host": "127.0.0.1",
        "relay_port": peer.port,
        "relay_tls": "none",
        "relay_timeout_s": 5.0,
        "smtp_port": 0,
    }
    values.update(overrides)
    return EmailSettings(**values)  # type: ignore[arg-type]


@pytest.fixture
async def email_enabled(settings: Settings, smtp_peer: SmtpPeer) -> AsyncIterator[Settings]:
    yield settings.model_copy(update={"email": email_settings(smtp_peer)})


_tokens = itertools.count()


def signed(raw: bytes, *, key: str = SIGNING_KEY, token: str | None = None, timestamp: int | None = None) -> dict:
    """The form fields Mailgun posts for a route URL ending in "mime"."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    token = token or hashlib.sha256(f"{next(_tokens)}-{time.time_ns()}".encode()).hexdigest()[:50]
    signature = hmac.new(key.encode(), f"{stamp}{token}".encode(), hashlib.sha256).hexdigest()
    return {"timestamp": stamp, "token": token, "signature": signature, "body-mime": raw}


def mime(
    sender: str,
    text: str,
    *,
    subject: str = "Hello",
    message_id: str | None = None,
    references: str | None = None,
) -> bytes:
    """A small plain-text message as a mail client writes it."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = FAA_ADDRESS
    msg["Subject"] = subject
    msg["Message-ID"] = message_id or email.utils.make_msgid(domain="client.example")
    if references:
        msg["References"] = references
        msg["In-Reply-To"] = references.split()[-1]
    msg.set_content(text)
    return msg.as_bytes()
