"""The self-hosted SMTP receiver: mail sent to it with aiosmtplib takes the webhook's path."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiosmtplib
import asyncpg
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

from bot.channels.email.inbound import EmailInbound, Notices
from bot.channels.email.smtp_server import LongLineSMTP, SmtpReceiver
from engine.settings import Settings
from tests.bot.channels.email.conftest import FAA_ADDRESS, SmtpPeer, _free_port, mime
from tests.fakes.openai_server import FakeOpenAI
from tests.system import System, make_family, running_system
from tools.storage import identities

MESSAGES = Path(__file__).parent / "messages"


@pytest.fixture
async def receiver(
    email_enabled: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> AsyncIterator[tuple[System, SmtpReceiver]]:
    async with running_system(email_enabled, fake_llm, admin_conn, worker=False) as running:
        smtp = SmtpReceiver(EmailInbound(running.deps, Notices(running.deps)))
        await smtp.start()
        try:
            yield running, smtp
        finally:
            await smtp.stop()


async def send(smtp: SmtpReceiver, raw: bytes, sender: str, recipients: list[str]) -> None:
    await aiosmtplib.send(raw, sender=sender, recipients=recipients, hostname="127.0.0.1", port=smtp.port, timeout=10)


async def test_mail_for_other_addresses_is_refused_at_rcpt(receiver: tuple[System, SmtpReceiver]) -> None:
    _, smtp = receiver
    with pytest.raises(aiosmtplib.SMTPRecipientsRefused) as caught:
        await send(smtp, mime("a@client.example", "relay this"), "a@client.example", ["victim@elsewhere.example"])
    assert caught.value.recipients[0].code == 550


async def test_a_linked_member_and_a_stranger_over_smtp(
    receiver: tuple[System, SmtpReceiver], smtp_peer: SmtpPeer
) -> None:
    system, smtp = receiver
    family = await make_family(system.admin, "Smtp", {"Tom": "Europe/Berlin"})
    code = await identities.create_invite(system.admin, family.household_id, family.user_ids["Tom"])
    await send(smtp, mime("tom.miller@icloud.com", f"join {code}"), "tom.miller@icloud.com", [FAA_ADDRESS])
    [welcome] = await smtp_peer.wait_for(1)
    assert "Tom" in welcome.message.get_content()

    raw = (MESSAGES / "iphone.eml").read_bytes()
    await send(smtp, raw, "tom.miller@icloud.com", [FAA_ADDRESS.upper()])
    await send(smtp, raw, "tom.miller@icloud.com", [FAA_ADDRESS])  # the sending server retried: one row
    texts = await system.admin.fetch(
        "SELECT text, payload->'thread'->>'message_id' AS mid FROM inbox WHERE channel = 'email' AND user_id = $1",
        family.user_ids["Tom"],
    )
    assert [(r["text"], r["mid"]) for r in texts] == [
        ("Bought flowers for Oma 🌷 15 euros", "<4A5B6C7D-8E9F-4A0B-9C1D-2E3F4A5B6C7D@icloud.com>")
    ]

    await send(smtp, mime("nobody@client.example", "hi"), "nobody@client.example", [FAA_ADDRESS])
    await smtp_peer.wait_for(2)
    assert len(smtp_peer.to("nobody@client.example")) == 1


async def test_a_message_without_sender_is_refused_permanently(receiver: tuple[System, SmtpReceiver]) -> None:
    _, smtp = receiver
    with pytest.raises(aiosmtplib.SMTPDataError) as caught:
        await send(smtp, (MESSAGES / "malformed_no_from.eml").read_bytes(), "x@client.example", [FAA_ADDRESS])
    assert caught.value.code == 550


def long_line_mime(sender: str) -> bytes:
    """A message whose body is one line of about 3,000 bytes, sent unwrapped (web forms, some HTML)."""
    items = ", ".join(f"item {n} 1.50 EUR" for n in range(200))
    text = f"Bought for the school party: {items}"
    raw = mime(sender, "placeholder").replace(b"placeholder", text.encode())
    assert max(len(line) for line in raw.split(b"\n")) > 3000
    return raw


class _Recording:
    def __init__(self) -> None:
        self.received: list[bytes] = []

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:  # noqa: N802
        self.received.append(envelope.original_content or b"")
        return "250 OK"


class _LongLineController(Controller):
    def factory(self) -> LongLineSMTP:
        return LongLineSMTP(self.handler, line_length_limit=1024 * 1024, **self.SMTP_kwargs)


@pytest.mark.parametrize("lenient", [False, True], ids=["aiosmtpd-default", "long-line-smtp"])
async def test_aiosmtpd_refuses_long_lines_unless_its_line_length_limit_is_raised(lenient: bool) -> None:
    """The library behaviour the receiver relies on: a real Controller, a real aiosmtplib client."""
    handler = _Recording()
    port = _free_port()
    controller = (_LongLineController if lenient else Controller)(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        raw = long_line_mime("a@client.example")
        if lenient:
            await aiosmtplib.send(
                raw, sender="a@client.example", recipients=[FAA_ADDRESS], port=port, hostname="127.0.0.1"
            )
            [content] = handler.received
            assert b"item 199 1.50 EUR" in content
        else:
            with pytest.raises(aiosmtplib.SMTPDataError) as caught:
                await aiosmtplib.send(
                    raw, sender="a@client.example", recipients=[FAA_ADDRESS], port=port, hostname="127.0.0.1"
                )
            assert caught.value.code == 500 and handler.received == []
    finally:
        controller.stop()


async def test_a_message_with_a_long_line_reaches_the_inbox(receiver: tuple[System, SmtpReceiver]) -> None:
    system, smtp = receiver
    family = await make_family(system.admin, "Smtp", {"Ben": "Europe/Berlin"})
    code = await identities.create_invite(system.admin, family.household_id, family.user_ids["Ben"])
    assert await identities.redeem_invite(system.admin, code, "email", "ben.longline@client.example") is not None
    await send(smtp, long_line_mime("ben.longline@client.example"), "ben.longline@client.example", [FAA_ADDRESS])
    text = await system.admin.fetchval(
        "SELECT text FROM inbox WHERE channel = 'email' AND user_id = $1", family.user_ids["Ben"]
    )
    assert text.startswith("Bought for the school party: item 0 1.50 EUR") and text.endswith("item 199 1.50 EUR")
