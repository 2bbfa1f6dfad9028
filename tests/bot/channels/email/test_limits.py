"""What a mail provider delivers is taken: a message far over the web API's body limit is spooled and stored, its
files kept or dropped by kind and size with a reply naming what was dropped, and only a body that can never be
stored is refused — with 406, which ends the provider's retries, never a retryable 413."""

from __future__ import annotations

import io
import json
import os
import urllib.parse
from collections.abc import AsyncIterator
from email.message import EmailMessage

import aiohttp
import asyncpg
import pytest

from engine.settings import Settings
from tests.bot.channels.email.conftest import FAA_ADDRESS, Received, SmtpPeer, signed
from tests.bot.channels.email.test_webhook import PATH, link, rows
from tests.fakes.openai_server import FakeOpenAI
from tests.system import System, make_family, running_system

JPEG = b"\xff\xd8\xff\xe0" + os.urandom(3 * 1024 * 1024)  # a 3 MB phone photo, as far as intake is concerned


@pytest.fixture
async def limited_mail(
    email_enabled: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    """Files up to 4 MB; webhook posts up to 8 MB (small, so the test is quick). No worker: intake is the subject."""
    channel = email_enabled.channel.model_copy(update={"attachment_max_bytes": 4 * 1024 * 1024})
    mail = email_enabled.email.model_copy(update={"webhook_max_bytes": 8 * 1024 * 1024})
    settings = email_enabled.model_copy(update={"channel": channel, "email": mail})
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system:
        yield system


async def post(system: System, fields: dict, *, multipart: bool = True) -> aiohttp.ClientResponse:
    """Post the fields as Mailgun does, multipart or urlencoded, the message as raw bytes."""
    if not multipart:
        body = io.BytesIO(urllib.parse.urlencode(fields).encode())
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        return await system.client.post(PATH, data=body, headers=headers)
    form = aiohttp.FormData()
    for name, value in fields.items():
        form.add_field(name, io.BytesIO(value if isinstance(value, bytes) else value.encode()), filename=name)
    return await system.client.post(PATH, data=form)


def with_files(sender: str, *files: tuple[str, str, bytes]) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = FAA_ADDRESS
    msg["Subject"] = "Receipts"
    msg.set_content("Here are the receipts from today.")
    for name, mime, data in files:
        maintype, subtype = mime.split("/")
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return msg.as_bytes()


async def test_a_phone_photo_far_over_the_api_body_limit_is_stored(limited_mail: System, smtp_peer: SmtpPeer) -> None:
    family = await make_family(limited_mail.admin, "Big photo", {"Anna": "Europe/Berlin"})
    await link(limited_mail, smtp_peer, family, "Anna", "anna@big-photo.example")
    raw = with_files("anna@big-photo.example", ("receipt.jpg", "image/jpeg", JPEG))
    assert len(raw) > 4 * limited_mail.deps.settings.web.max_body_bytes  # base64: a 4 MB message

    for multipart in (True, False):  # Mailgun posts multipart; urlencoded is spooled the same way
        response = await post(limited_mail, signed(raw), multipart=multipart)
        assert response.status == 200, await response.text()

    [row] = await rows(limited_mail.admin, "anna@big-photo.example")  # the second post was the same message
    [attachment] = json.loads(row["payload"])["attachments"]
    stored = await limited_mail.admin.fetchval("SELECT data FROM media WHERE id = $1", attachment["media_id"])
    assert bytes(stored) == JPEG


async def test_files_not_kept_are_named_in_a_reply_and_the_rest_is_taken(
    limited_mail: System, smtp_peer: SmtpPeer
) -> None:
    family = await make_family(limited_mail.admin, "Dropped files", {"Anna": "Europe/Berlin"})
    await link(limited_mail, smtp_peer, family, "Anna", "anna@dropped.example")
    raw = with_files(
        "anna@dropped.example",
        ("receipt.jpg", "image/jpeg", JPEG[:100_000]),
        ("holiday.zip", "application/zip", b"PK\x03\x04" + b"z" * 1000),
        ("scan.png", "image/png", b"\x89PNG" + b"p" * (5 * 1024 * 1024)),
    )
    response = await post(limited_mail, signed(raw))
    assert response.status == 200 and (await response.json())["status"] == "accepted"

    [row] = await rows(limited_mail.admin, "anna@dropped.example")
    assert row["text"].startswith("Here are the receipts")
    assert [a["name"] for a in json.loads(row["payload"])["attachments"]] == ["receipt.jpg"]

    def text(received: Received) -> str:
        body = received.message.get_body(preferencelist=("plain",))
        return str(body.get_content()) if body is not None else ""

    received = await smtp_peer.wait_until(  # the notice, whether the reply to the message came first or not
        lambda m: "anna@dropped.example" in m.recipients and "holiday.zip" in text(m)
    )
    notice = text(received)
    assert "holiday.zip (I keep only photos" in notice and "scan.png (larger than 4 MB)" in notice


async def test_only_a_body_that_can_never_be_stored_is_refused_and_with_406(limited_mail: System) -> None:
    before = await limited_mail.admin.fetchval("SELECT count(*) FROM inbox WHERE channel = 'email'")
    raw = with_files("anna@huge.example", ("video.jpg", "image/jpeg", os.urandom(7 * 1024 * 1024)))
    response = await post(limited_mail, signed(raw))
    assert response.status == 406 and (await response.json())["error"]["code"] == "too_large"
    assert await limited_mail.admin.fetchval("SELECT count(*) FROM inbox WHERE channel = 'email'") == before
