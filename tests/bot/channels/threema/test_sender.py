"""Replies out to Threema: what the official SDK decrypts on the other side, charts as files, and how the
Gateway's errors become permanent or retryable delivery failures."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from bot.channels.threema.gateway import GatewayClient
from bot.channels.threema.sender import MAX_TEXT_BYTES, ThreemaSender, chunks
from engine.channel_settings import ThreemaSettings
from engine.errors import DeliveryError
from tests.bot.channels.threema.conftest import GATEWAY_ID
from tests.bot.channels.threema.gateway_fake import FakeGateway, Peer
from tests.fakes.outbox_rows import outbox_row
from tools.storage.outbox import OutboxRow

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


def row(recipient: str, text: str, **payload: Any) -> OutboxRow:
    return outbox_row("threema", recipient, text, household_id=7, payload=payload)


@pytest.fixture
async def client(threema_settings: ThreemaSettings, redis: Any) -> AsyncIterator[GatewayClient]:
    gateway_client = GatewayClient(threema_settings, redis)
    yield gateway_client
    await gateway_client.close()


@pytest.fixture
def loaded() -> list[tuple[int, int]]:
    return []


@pytest.fixture
def sender(client: GatewayClient, loaded: list[tuple[int, int]]) -> ThreemaSender:
    async def load_media(household_id: int, media_id: int) -> tuple[str, bytes]:
        loaded.append((household_id, media_id))
        return "image/png", PNG

    return ThreemaSender(client, load_media)


async def test_a_reply_decrypts_to_its_text_with_the_sdk(
    sender: ThreemaSender, gateway: FakeGateway, make_peer: Callable[[], Awaitable[Peer]]
) -> None:
    anna = await make_peer()
    await sender.send(row(anna.identity, "Saved 12.00 EUR for bread. Grüße 👋"))
    [sent] = gateway.sent
    assert sent.sender == GATEWAY_ID and sent.to == anna.identity
    message = await anna.read(sent)
    assert type(message).__name__ == "TextMessage" and message.text == "Saved 12.00 EUR for bread. Grüße 👋"


async def test_options_become_a_numbered_list(
    sender: ThreemaSender, gateway: FakeGateway, make_peer: Callable[[], Awaitable[Peer]]
) -> None:
    anna = await make_peer()
    await sender.send(row(anna.identity, "What was the 20 for?", options=["groceries (EUR)", "fuel (EUR)"]))
    [message] = await anna.read_all(gateway.sent)
    assert message.text.startswith("What was the 20 for?\n\n1. groceries (EUR)\n2. fuel (EUR)")


async def test_a_chart_goes_up_as_an_encrypted_blob_and_out_as_a_file_message(
    sender: ThreemaSender, gateway: FakeGateway, make_peer: Callable[[], Awaitable[Peer]], loaded: list[Any]
) -> None:
    anna = await make_peer()
    await sender.send(row(anna.identity, "Groceries by week:", media_ids=[42]))
    assert loaded == [(7, 42)]
    text, chart = await anna.read_all(gateway.sent)
    assert text.text == "Groceries by week:"
    assert type(chart).__name__ == "FileMessage"  # the SDK wraps its classes in proxies
    assert chart.file_content == PNG and chart.mime_type == "image/png" and chart._file_name == "chart-42.png"
    assert all(PNG not in blob for blob in gateway.blobs.values())  # only ciphertext left FAA


async def test_a_long_reply_is_split_under_the_gateway_limit(
    sender: ThreemaSender, gateway: FakeGateway, make_peer: Callable[[], Awaitable[Peer]]
) -> None:
    anna = await make_peer()
    text = " ".join(f"word{n}-早" for n in range(900))
    await sender.send(row(anna.identity, text))
    received = [m.text for m in await anna.read_all(gateway.sent)]
    assert len(received) > 1 and all(len(part.encode()) <= MAX_TEXT_BYTES for part in received)
    assert " ".join(received) == text


def test_chunks_cut_inside_a_word_only_when_there_is_no_space() -> None:
    assert chunks("a" * 10, limit=4) == ["aaaa", "aaaa", "aa"]
    assert chunks("ab cd ef", limit=5) == ["ab cd", "ef"]
    assert chunks("   ") == []


async def test_the_recipients_key_is_fetched_once_then_cached(
    sender: ThreemaSender, gateway: FakeGateway, make_peer: Callable[[], Awaitable[Peer]]
) -> None:
    anna = await make_peer()
    await sender.send(row(anna.identity, "one"))
    await sender.send(row(anna.identity, "two"))
    assert gateway.requests.count(f"GET /pubkeys/{anna.identity}") == 1


@pytest.mark.parametrize(
    ("route", "status", "permanent", "retry_after"),
    [
        ("send_e2e", 402, True, None),  # no credits
        ("send_e2e", 400, True, None),  # bad recipient
        ("send_e2e", 401, True, None),  # wrong secret
        ("send_e2e", 500, False, None),
        ("send_e2e", 429, False, 7.0),
        ("pubkeys", 404, True, None),
        ("pubkeys", 503, False, None),
        ("upload_blob", 402, True, None),
    ],
)
async def test_gateway_errors_become_delivery_errors(
    sender: ThreemaSender,
    gateway: FakeGateway,
    make_peer: Callable[[], Awaitable[Peer]],
    route: str,
    status: int,
    permanent: bool,
    retry_after: float | None,
) -> None:
    anna = await make_peer()
    gateway.fail_next[route] = [status]
    with pytest.raises(DeliveryError) as raised:
        await sender.send(row(anna.identity, "hi", media_ids=[1]))
    assert raised.value.transient is not permanent and raised.value.retry_after_s == retry_after
    assert str(status) in raised.value.reason


async def test_an_unreachable_gateway_is_retryable(threema_settings: ThreemaSettings) -> None:
    unreachable = threema_settings.model_copy(update={"base_url": "http://127.0.0.1:9"})
    client = GatewayClient(unreachable)
    try:
        with pytest.raises(DeliveryError) as raised:
            await ThreemaSender(client, _no_media).send(row("ANNA1234", "hi"))
    finally:
        await client.close()
    assert raised.value.transient is True and "unreachable" in raised.value.reason


async def test_a_recipient_that_is_no_threema_id_fails_for_good(sender: ThreemaSender, gateway: FakeGateway) -> None:
    with pytest.raises(DeliveryError) as raised:
        await sender.send(row("anna@example.com", "hi"))
    assert not raised.value.transient and gateway.requests == []


async def _no_media(household_id: int, media_id: int) -> tuple[str, bytes]:
    raise AssertionError("no media expected")
