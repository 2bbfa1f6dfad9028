"""The Threema channel end to end: SDK-built callbacks into the real web app, the worker and the scripted model,
and replies the SDK decrypts at the fake Gateway."""

from __future__ import annotations

import asyncio
import io
import json
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

import pytest

from bot.channels.threema.callback import CALLBACK_PATH
from bot.channels.threema.fetcher import ThreemaFetcher
from bot.channels.threema.gateway import GatewayClient
from engine.channel_settings import ThreemaSettings
from engine.domain import Attachment
from tests.bot.channels.threema.gateway_fake import FakeGateway, Peer, sign
from tests.e2e.scripts import routed_model
from tests.system import Family, System, make_family
from tools.storage import identities

MakePeer = Callable[[], Awaitable[Peer]]
FORM = "application/x-www-form-urlencoded"


async def post(system: System, form: dict[str, str]) -> int:
    response = await system.client.post(CALLBACK_PATH, data=form)
    await response.read()
    return response.status


async def rows(system: System, peer: Peer) -> list[dict[str, Any]]:
    found = await system.admin.fetch(
        "SELECT text, external_id, payload FROM inbox WHERE channel = 'threema' AND payload->>'reply_to' = $1",
        peer.identity,
    )
    return [{**row, "payload": json.loads(row["payload"])} for row in found]


async def settled(system: System, peer: Peer) -> None:
    """Wait until every message of the peer is finished and its reply delivered, so the worker stops idle."""
    async with asyncio.timeout(30):
        while await system.admin.fetchval(
            """SELECT (SELECT count(*) FROM inbox WHERE payload->>'reply_to' = $1
                       AND status IN ('queued', 'processing'))
                    + (SELECT count(*) FROM outbox WHERE recipient = $1 AND status IN ('pending', 'sending'))""",
            peer.identity,
        ):
            await asyncio.sleep(0.02)


async def linked(
    system: System, gateway: FakeGateway, peer: Peer, member: str = "Anna", timezone: str = "Europe/Berlin"
) -> Family:
    """A family whose member sent `JOIN <code>` from the peer's Threema ID and got the welcome."""
    family = await make_family(system.admin, f"Threema {peer.identity}", {member: timezone})
    code = await identities.create_invite(system.admin, family.household_id, family.user_ids[member])
    before = len(gateway.sent)
    assert await post(system, await peer.callback(peer.text(f"join {code}"))) == 200
    welcome = await peer.read((await gateway.wait_sent(before + 1))[-1])
    assert welcome.text.startswith(f"Welcome, {member}!")
    return family


async def test_a_text_from_a_linked_member_is_answered_encrypted(
    threema_system: System, gateway: FakeGateway, make_peer: MakePeer
) -> None:
    anna = await make_peer()
    family = await linked(threema_system, gateway, anna)
    identity = await threema_system.admin.fetchrow(
        "SELECT user_id, preferred FROM user_identities WHERE channel = 'threema' AND external_id = $1", anna.identity
    )
    assert identity is not None and identity["user_id"] == family.user_ids["Anna"] and identity["preferred"]

    threema_system.llm.script(routed_model())
    form = await anna.callback(anna.text("I spent 12 euros on bread"))
    assert await post(threema_system, {**form, "newField": "x"}) == 200  # fields the Gateway adds are ignored
    reply = await anna.read((await gateway.wait_sent(2))[-1])
    assert "12.00 EUR" in reply.text
    [row] = await rows(threema_system, anna)
    assert row["text"] == "I spent 12 euros on bread"
    assert row["external_id"] == f"{anna.identity}:{form['messageId']}"
    assert row["payload"]["threema"]["message_id"] == form["messageId"]
    await settled(threema_system, anna)


async def test_forged_or_misaddressed_callbacks_are_refused_and_leave_nothing(
    threema_web: System, gateway: FakeGateway, make_peer: MakePeer
) -> None:
    anna = await make_peer()
    await linked(threema_web, gateway, anna)
    form = await anna.callback(anna.text("hello"))
    assert await post(threema_web, {**form, "mac": "0" * 64}) == 401
    assert await post(threema_web, {**form, "box": form["box"][:-2] + "00"}) == 401  # tampered box
    assert await post(threema_web, {k: v for k, v in form.items() if k != "mac"}) == 401
    elsewhere = await anna.callback(anna.text("hello"), to="*ELSEWHR")  # signed, but not for us
    assert await post(threema_web, elsewhere) == 403
    assert await rows(threema_web, anna) == [] and threema_web.llm.requests == []
    assert len(gateway.sent) == 1  # the welcome only


async def test_malformed_or_oversized_callbacks_get_4xx_and_leave_nothing(
    threema_web: System, gateway: FakeGateway, make_peer: MakePeer
) -> None:
    anna = await make_peer()
    await linked(threema_web, gateway, anna)
    good = await anna.callback(anna.text("hello"))

    def resigned(**change: str) -> dict[str, str]:
        form = {**good, **change}
        return {**form, "mac": sign("gw-secret-for-tests", form)}

    assert await post(threema_web, resigned(nonce="zz" * 24)) == 400
    assert await post(threema_web, resigned(messageId="123")) == 400
    assert await post(threema_web, resigned(box=secrets.token_hex(64))) == 400  # does not open
    assert await post(threema_web, resigned(date="yesterday")) == 400
    assert await post(threema_web, {k: v for k, v in good.items() if k != "box"}) == 401  # the MAC needs it
    response = await threema_web.client.post(CALLBACK_PATH, data=b"\xff\xfe", headers={"Content-Type": "text/plain"})
    assert response.status == 400
    big = {**good, "box": "00" * (threema_web.deps.settings.web.max_body_bytes // 2 + 10)}
    body = io.BytesIO(urlencode(big).encode())  # a stream: aiohttp warns about large raw bodies
    response = await threema_web.client.post(CALLBACK_PATH, data=body, headers={"Content-Type": FORM})
    assert response.status == 413
    assert await rows(threema_web, anna) == [] and threema_web.llm.requests == []


async def test_a_redelivered_callback_is_stored_and_answered_once(
    threema_system: System, gateway: FakeGateway, make_peer: MakePeer
) -> None:
    anna = await make_peer()
    await linked(threema_system, gateway, anna)
    threema_system.llm.script(routed_model())
    form = await anna.callback(anna.text("how are you? just once"))
    assert await post(threema_system, form) == 200
    await gateway.wait_sent(2)
    assert await post(threema_system, form) == 200
    seen = [key.decode() for key in await threema_system.redis.keys("faa:threema:seen:*")]
    assert seen and not [key for key in seen if anna.identity in key]  # the Threema ID only as a keyed hash
    await threema_system.redis.flushdb()  # even with Redis' memory of it gone, the inbox dedupes
    assert await post(threema_system, form) == 200
    assert len(await rows(threema_system, anna)) == 1
    assert len(threema_system.llm.requests) == 1 and len(gateway.sent) == 2
    await settled(threema_system, anna)


async def test_a_stranger_gets_one_notice_and_nothing_is_stored(
    threema_web: System, gateway: FakeGateway, make_peer: MakePeer
) -> None:
    eve = await make_peer()
    assert await post(threema_web, await eve.callback(eve.text("what is the wifi password?"))) == 200
    assert await post(threema_web, await eve.callback(eve.text("hello??"))) == 200
    [notice] = await eve.read_all(await gateway.wait_sent(1))
    assert "JOIN <code>" in notice.text
    assert len(gateway.sent) == 1 and await rows(threema_web, eve) == []
    assert threema_web.llm.requests == []
    assert await post(threema_web, await eve.callback(eve.text("JOIN AAAAA-AAAAA"))) == 200
    refused = await eve.read((await gateway.wait_sent(2))[-1])
    assert "did not work" in refused.text
    assert (
        await threema_web.admin.fetchval("SELECT count(*) FROM user_identities WHERE external_id = $1", eve.identity)
        == 0
    )


async def test_delivery_receipts_are_acknowledged_and_ignored(
    threema_web: System, gateway: FakeGateway, make_peer: MakePeer
) -> None:
    anna = await make_peer()
    await linked(threema_web, gateway, anna)
    assert await post(threema_web, await anna.callback(anna.receipt(b"\x01" * 8))) == 200
    assert await rows(threema_web, anna) == [] and len(gateway.sent) == 1
    assert threema_web.llm.requests == []


async def test_images_and_files_become_attachments_the_fetcher_downloads_and_decrypts(
    threema_system: System, gateway: FakeGateway, make_peer: MakePeer, threema_settings: ThreemaSettings
) -> None:
    anna = await make_peer()
    await linked(threema_system, gateway, anna)
    threema_system.llm.script(routed_model())
    photo = b"\xff\xd8\xff\xe0 receipt photo " + secrets.token_bytes(2000)
    assert await post(threema_system, await anna.callback(anna.image(photo))) == 200
    pdf = b"%PDF-1.7 " + secrets.token_bytes(500)
    assert await post(threema_system, await anna.callback(anna.file(pdf, "application/pdf", "bill.pdf", "the bill")))
    stored = await rows(threema_system, anna)
    image_row = next(r for r in stored if r["text"] == "")
    file_row = next(r for r in stored if r["text"] == "the bill")
    [image] = [Attachment(**a) for a in image_row["payload"]["attachments"]]
    [document] = [Attachment(**a) for a in file_row["payload"]["attachments"]]
    assert (image.kind, image.mime) == ("image", "image/jpeg")
    assert (document.kind, document.mime, document.name) == ("file", "application/pdf", "bill.pdf")

    client = GatewayClient(threema_settings)  # as the worker has it, without the cache
    try:
        fetcher = ThreemaFetcher(client)
        assert await fetcher.fetch(image) == photo
        assert await fetcher.fetch(document) == pdf
    finally:
        await client.close()
    await gateway.wait_sent(3)  # both were answered too
    await settled(threema_system, anna)


async def test_a_numbered_answer_picks_the_option_of_the_last_reply(
    threema_system: System, gateway: FakeGateway, make_peer: MakePeer
) -> None:
    anna = await make_peer()
    await linked(threema_system, gateway, anna, timezone="UTC")  # no home currency: an amount asks for one
    threema_system.llm.script(routed_model())
    assert await post(threema_system, await anna.callback(anna.text("I paid 20 for bread"))) == 200
    question = await anna.read((await gateway.wait_sent(2))[-1])
    assert "1. EUR\n2. USD" in question.text
    async with asyncio.timeout(20):  # the row is marked sent just after the Gateway took the message
        while not await threema_system.admin.fetchval(
            "SELECT count(*) FROM outbox WHERE recipient = $1 AND status = 'sent' AND payload ? 'options'",
            anna.identity,
        ):
            await asyncio.sleep(0.02)
    assert await post(threema_system, await anna.callback(anna.text(" 2 "))) == 200
    answer = await anna.read((await gateway.wait_sent(3))[-1])
    assert answer.text  # the question answered (the currency alone does not complete the amount yet)
    chosen = next(r for r in await rows(threema_system, anna) if r["text"] == "USD")
    assert chosen["payload"]["choice"]["number"] == 2
    assert await post(threema_system, await anna.callback(anna.text("7"))) == 200  # no such option: kept as typed
    await gateway.wait_sent(4)
    typed = next(r for r in await rows(threema_system, anna) if r["text"] == "7")
    assert "choice" not in typed["payload"]
    await settled(threema_system, anna)


@pytest.mark.parametrize("status", [503, 404])
async def test_an_unavailable_sender_key_stores_nothing(
    threema_web: System, gateway: FakeGateway, make_peer: MakePeer, status: int
) -> None:
    anna = await make_peer()
    form = await anna.callback(anna.text("hello"))
    gateway.fail_next["pubkeys"] = [status]
    assert await post(threema_web, form) == (503 if status == 503 else 400)
    assert gateway.sent == [] and await rows(threema_web, anna) == []
    assert await post(threema_web, form) == 200  # the Gateway's redelivery, once the key is there
    assert len(await gateway.wait_sent(1)) == 1  # the stranger's notice


async def test_a_numbered_answer_to_a_reminder_carries_what_it_answers(
    threema_web: System, gateway: FakeGateway, make_peer: MakePeer
) -> None:
    anna = await make_peer()
    family = await linked(threema_web, gateway, anna)
    await threema_web.admin.execute(
        """INSERT INTO outbox (household_id, user_id, channel, recipient, text, payload, status, sent_at)
           VALUES ($1, $2, 'threema', $3, 'Take the bins out', $4, 'sent', now())""",
        family.household_id,
        family.user_ids["Anna"],
        anna.identity,
        json.dumps({"kind": "reminder", "reminder_id": 41, "options": ["Snooze 15 min", "Done"]}),
    )
    assert await post(threema_web, await anna.callback(anna.text("2"))) == 200
    [row] = await rows(threema_web, anna)
    assert row["text"] == "Done"
    assert row["payload"]["answers"] == {"kind": "reminder", "reminder_id": 41}
