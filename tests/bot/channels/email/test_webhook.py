"""The email channel end to end: signed raw-MIME webhook → inbox → worker → scripted model → reply by SMTP."""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import asyncpg
import pytest

from engine.settings import Settings
from tests.bot.channels.email.conftest import FAA_ADDRESS, SmtpPeer, mime, signed
from tests.e2e.scripts import routed_model, routed_words
from tests.fakes.openai_server import FakeOpenAI
from tests.system import Family, System, make_family, running_system
from tools.storage import identities

PATH = "/v1/email/inbound/mime"
MESSAGES = Path(__file__).parent / "messages"


@pytest.fixture
async def mail_system(
    email_enabled: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    fake_llm.script(routed_model())
    async with running_system(email_enabled, fake_llm, admin_conn) as running:
        yield running
        await _settle(admin_conn)
    # Leave nothing queued for the sweepers of later tests.
    await admin_conn.execute(
        "UPDATE inbox SET status = 'failed' WHERE status IN ('queued', 'processing') AND channel = 'email'"
    )


async def _settle(admin: asyncpg.Connection, timeout_s: float = 20.0) -> None:
    """Let the worker finish the messages a test left it, so stopping it interrupts no job."""
    deadline = time.monotonic() + timeout_s
    pending = "SELECT count(*) FROM inbox WHERE status IN ('queued', 'processing') AND channel = 'email'"
    while await admin.fetchval(pending) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


async def post(system: System, fields: dict, *, multipart: bool = True) -> aiohttp.ClientResponse:
    """Post the fields as Mailgun does: multipart/form-data, or urlencoded. Latin-1 carries any bytes unchanged."""
    form = aiohttp.FormData(default_to_multipart=multipart, charset="latin-1")
    for name, value in fields.items():
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        form.add_field(name, text, content_type="text/plain; charset=latin-1" if multipart else None)
    return await system.client.post(PATH, data=form)


async def rows(admin: asyncpg.Connection, sender: str) -> list[asyncpg.Record]:
    return await admin.fetch(
        "SELECT id, text, payload, status FROM inbox WHERE channel = 'email' AND payload->>'reply_to' = $1 ORDER BY id",
        sender,
    )


async def link(system: System, peer: SmtpPeer, family: Family, member: str, address: str) -> None:
    code = await identities.create_invite(system.admin, family.household_id, family.user_ids[member])
    response = await post(system, signed(mime(address, "", subject=f"JOIN {code}")))
    assert response.status == 200 and (await response.json())["status"] == "linked"
    [welcome] = [m for m in await peer.wait_for(len(peer.messages) + 1) if address in m.recipients]
    assert member in welcome.message.get_content()


async def test_a_linked_member_gets_a_threaded_reply_to_only_the_new_text(
    mail_system: System, smtp_peer: SmtpPeer
) -> None:
    family = await make_family(mail_system.admin, "Mail", {"Anna": "Europe/Berlin"})
    await link(mail_system, smtp_peer, family, "Anna", "anna.miller@gmail.com")

    raw = (MESSAGES / "gmail.eml").read_bytes()  # From: Anna Miller <Anna.Miller@Gmail.com>, quoted history below
    response = await post(mail_system, signed(raw))
    assert response.status == 200 and (await response.json())["status"] == "accepted"

    [_, reply] = await smtp_peer.wait_for(2)  # the welcome, then the reply
    msg = reply.message
    assert reply.recipients == ["anna.miller@gmail.com"]
    assert msg["In-Reply-To"] == "<CAJx3kE8g0ZqW=8N+gmail.1@mail.gmail.com>"
    assert msg["References"].split() == ["<a1b2c3.faa@family.example>", "<CAJx3kE8g0ZqW=8N+gmail.1@mail.gmail.com>"]
    assert msg["Subject"] == "Re: Saved 12.00 EUR for bread"
    assert "35.50 EUR" in msg.get_content()
    [request] = mail_system.llm.requests  # the model read exactly the new text
    assert routed_words(request) == "I spent 35.50 euros on groceries at Lidl"
    [row] = await rows(mail_system.admin, "anna.miller@gmail.com")
    assert row["text"] == "I spent 35.50 euros on groceries at Lidl" and row["status"] == "done"


async def test_forged_stale_and_replayed_requests_leave_no_row(mail_system: System, smtp_peer: SmtpPeer) -> None:
    family = await make_family(mail_system.admin, "Mail", {"Ben": "Europe/Berlin"})
    await link(mail_system, smtp_peer, family, "Ben", "ben@client.example")
    raw = mime("ben@client.example", "I spent 10 euros on fuel")

    forged = await post(mail_system, signed(raw, key="not-the-key"))
    assert forged.status == 401
    unsigned = await post(mail_system, {"body-mime": raw})
    assert unsigned.status == 401
    stale = await post(mail_system, signed(raw, timestamp=int(time.time()) - 3600))
    assert stale.status == 401
    assert await rows(mail_system.admin, "ben@client.example") == []

    fields = signed(raw)
    assert (await post(mail_system, fields)).status == 200
    replayed = await post(mail_system, fields, multipart=False)
    assert replayed.status == 406 and (await replayed.json())["error"]["code"] == "replayed"
    assert len(await rows(mail_system.admin, "ben@client.example")) == 1


async def test_a_redelivered_message_id_makes_one_row(mail_system: System, smtp_peer: SmtpPeer) -> None:
    family = await make_family(mail_system.admin, "Mail", {"Cleo": "Europe/Berlin"})
    await link(mail_system, smtp_peer, family, "Cleo", "cleo@client.example")
    raw = mime("cleo@client.example", "Tom is allergic to peanuts", message_id="<same-1@client.example>")
    first = await post(mail_system, signed(raw))
    again = await post(mail_system, signed(raw), multipart=False)  # a new token: a second delivery, not a replay
    assert [(await r.json())["status"] for r in (first, again)] == ["accepted", "duplicate"]
    assert len(await rows(mail_system.admin, "cleo@client.example")) == 1


async def test_a_stranger_gets_one_notice_and_nothing_is_stored(mail_system: System, smtp_peer: SmtpPeer) -> None:
    for text in ("what is the wifi password?", "hello??"):
        response = await post(mail_system, signed(mime("stranger@client.example", text)))
        assert response.status == 200 and (await response.json())["status"] == "unknown"
    [notice] = await smtp_peer.wait_for(1)
    assert notice.recipients == ["stranger@client.example"] and "JOIN" in notice.message.get_content()
    await mail_system.client.close()  # the app's cleanup waits for notices under way: no second one was sent
    assert len(smtp_peer.to("stranger@client.example")) == 1
    assert await rows(mail_system.admin, "stranger@client.example") == []
    assert mail_system.llm.requests == []


async def test_a_photo_is_stored_as_media_for_the_message(mail_system: System, smtp_peer: SmtpPeer) -> None:
    family = await make_family(mail_system.admin, "Mail", {"Clara": "Europe/Berlin"})
    await link(mail_system, smtp_peer, family, "Clara", "clara@icloud.com")
    response = await post(mail_system, signed((MESSAGES / "apple_mail.eml").read_bytes()))
    assert response.status == 200
    [row] = await rows(mail_system.admin, "clara@icloud.com")
    [attachment] = json.loads(row["payload"])["attachments"]
    assert attachment["kind"] == "image" and attachment["name"] == "receipt.jpg"
    stored = await mail_system.admin.fetchrow(
        "SELECT household_id, mime, data, source_inbox_id FROM media WHERE id = $1", attachment["media_id"]
    )
    assert stored["household_id"] == family.household_id and stored["mime"] == "image/jpeg"
    assert bytes(stored["data"]).startswith(b"\xff\xd8") and stored["source_inbox_id"] == row["id"]
    await smtp_peer.wait_for(2)  # the welcome and the reply


async def test_bad_bodies_get_clear_statuses_and_no_row(mail_system: System, smtp_peer: SmtpPeer) -> None:
    before = await mail_system.admin.fetchval("SELECT count(*) FROM inbox WHERE channel = 'email'")
    huge = io.BytesIO(b"x" * (mail_system.deps.settings.email.webhook_max_bytes + 1))
    too_big = await mail_system.client.post(PATH, data=huge, headers={"Content-Type": "text/plain"})
    assert too_big.status == 406  # it can never be stored: a retry would not help
    no_sender = await post(mail_system, signed((MESSAGES / "malformed_no_from.eml").read_bytes()))
    assert no_sender.status == 406
    no_mime = await post(mail_system, {k: v for k, v in signed(b"").items() if k != "body-mime"})
    assert no_mime.status == 400
    assert await mail_system.admin.fetchval("SELECT count(*) FROM inbox WHERE channel = 'email'") == before
    assert smtp_peer.to(FAA_ADDRESS) == []


async def test_a_numbered_answer_picks_the_option_of_the_last_email_sent(
    mail_system: System, smtp_peer: SmtpPeer
) -> None:
    family = await make_family(mail_system.admin, "Mail", {"Anna": "Europe/Berlin"})
    await link(mail_system, smtp_peer, family, "Anna", "anna@client.example")
    # A reminder went out by email with its two quick replies, numbered.
    await mail_system.admin.execute(
        """INSERT INTO outbox (household_id, user_id, channel, recipient, text, payload, status, sent_at)
           VALUES ($1, $2, 'email', 'anna@client.example', 'Take the bins out', $3, 'sent', now())""",
        family.household_id,
        family.user_ids["Anna"],
        json.dumps({"kind": "reminder", "reminder_id": 77, "options": ["Snooze 15 min", "Done"]}),
    )

    response = await post(mail_system, signed(mime("anna@client.example", "2\n\nOn Monday FAA wrote:\n> 1. ...")))

    assert response.status == 200 and (await response.json())["status"] == "accepted"
    [row] = await rows(mail_system.admin, "anna@client.example")
    assert row["text"] == "Done"
    assert json.loads(row["payload"])["answers"] == {"kind": "reminder", "reminder_id": 77}  # owner conn: JSON text


async def test_a_reply_below_the_quote_with_only_in_reply_to_is_read_and_answered_in_its_thread(
    mail_system: System, smtp_peer: SmtpPeer
) -> None:
    family = await make_family(mail_system.admin, "Mail", {"Klaus": "Europe/Berlin"})
    await link(mail_system, smtp_peer, family, "Klaus", "klaus@web.de")
    # Thunderbird, German, written below the quote; the client sent In-Reply-To but no References.
    raw = (
        "From: Klaus Becker <klaus@web.de>\r\nTo: FAA <faa@family.example>\r\nSubject: Re: Bäcker\r\n"
        "Message-ID: <tb-5@web.de>\r\nIn-Reply-To: <q-5.faa@family.example>\r\nUser-Agent: Mozilla Thunderbird\r\n"
        "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8; format=flowed\r\n"
        "Content-Transfer-Encoding: 8bit\r\n\r\n"
        "Am 03.04.24 um 10:15 schrieb FAA:\r\n> Wie viel hast du beim Bäcker ausgegeben?\r\n\r\n"
        "12 Euro für Brot und Brötchen.\r\n"
    ).encode()
    response = await post(mail_system, signed(raw))
    assert response.status == 200 and (await response.json())["status"] == "accepted"

    reply = (await smtp_peer.wait_for(2))[-1]
    assert "12" in reply.message.get_content()
    assert [routed_words(request) for request in mail_system.llm.requests] == ["12 Euro für Brot und Brötchen."]
    assert reply.message["In-Reply-To"] == "<tb-5@web.de>"
    assert reply.message["References"].split() == ["<q-5.faa@family.example>", "<tb-5@web.de>"]
    [row] = await rows(mail_system.admin, "klaus@web.de")
    assert row["text"] == "12 Euro für Brot und Brötchen."


async def test_no_redis_key_names_a_senders_address(mail_system: System, smtp_peer: SmtpPeer) -> None:
    for text in ("hello?", "anyone?"):
        await post(mail_system, signed(mime("curious.neighbour@client.example", text)))
    await smtp_peer.wait_for(1)
    keys = [key.decode() for key in await mail_system.redis.keys("*")]
    assert any(key.startswith("faa:channel:notice:") for key in keys)
    assert not [key for key in keys if "curious.neighbour" in key or "client.example" in key]
