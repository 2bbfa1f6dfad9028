"""The callback MAC (the Gateway's public test vector), padding, and opening boxes the official SDK sealed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from bot.channels.errors import MalformedMessage
from bot.channels.threema import crypto, messages
from tests.bot.channels.threema.conftest import GATEWAY_ID, PRIVATE_KEY
from tests.bot.channels.threema.gateway_fake import FakeGateway, Peer

# The public test vector from the Threema Gateway documentation and its client libraries.
VECTOR = {
    "from": "ECHOECHO",
    "to": "*TESTTST",
    "messageId": "0102030405060708",
    "date": "1616950936",
    "nonce": "ff" * 24,
    "box": "012345abcdef",
    "mac": "622b362e8353658ee649a5548acecc9ce9b88384d6b7e08e212446d68455b14e",
}


def test_the_callback_mac_reproduces_the_public_test_vector() -> None:
    assert crypto.callback_mac("nevergonnagiveyouup", VECTOR) == VECTOR["mac"]
    assert crypto.mac_matches("nevergonnagiveyouup", VECTOR)
    assert crypto.mac_matches("nevergonnagiveyouup", {**VECTOR, "mac": VECTOR["mac"].upper()})


@pytest.mark.parametrize(
    "change",
    [
        {"box": "012345abcdee"},
        {"date": "1616950937"},
        {"to": "*TESTTSX"},
        {"mac": "0" * 64},
        {"mac": "622b362e"},
        {"mac": "ü" * 64},
    ],
)
def test_any_change_breaks_the_mac(change: dict[str, str]) -> None:
    assert not crypto.mac_matches("nevergonnagiveyouup", {**VECTOR, **change})
    assert not crypto.mac_matches("another secret", VECTOR)


def test_a_missing_field_is_no_match() -> None:
    incomplete = {k: v for k, v in VECTOR.items() if k != "nonce"}
    assert not crypto.mac_matches("nevergonnagiveyouup", incomplete)


def test_padding_is_random_at_least_32_bytes_and_checked() -> None:
    padded = {crypto.pad(b"\x01hi") for _ in range(20)}
    assert len(padded) > 1  # random lengths
    for data in padded:
        assert len(data) >= 32 + 1 and crypto.unpad(data) == b"\x01hi"
    long = b"\x01" + b"x" * 300
    assert crypto.unpad(crypto.pad(long)) == long


@pytest.mark.parametrize("data", [b"", b"\x01hi\x00", b"\x01hi\x03\x03", b"\x01hi\x02\x01\x02", b"\x04\x04\x04\x04"])
def test_bad_padding_is_refused(data: bytes) -> None:
    with pytest.raises(MalformedMessage):
        crypto.unpad(data)


def test_a_box_for_someone_else_does_not_open() -> None:
    other_private = bytes(range(32))
    nonce, box = crypto.seal(PRIVATE_KEY, crypto.public_key_of(other_private), b"\x01secret")
    with pytest.raises(MalformedMessage):
        crypto.open_box(PRIVATE_KEY, crypto.public_key_of(PRIVATE_KEY), nonce, box)
    assert crypto.open_box(other_private, crypto.public_key_of(PRIVATE_KEY), nonce, box) == b"\x01secret"


async def test_messages_sealed_by_the_official_sdk_open_and_parse(
    gateway: FakeGateway, make_peer: Callable[[], Awaitable[Peer]]
) -> None:
    peer = await make_peer()
    their_key = gateway.keys[peer.identity]

    async def opened(message: object) -> messages.Content:
        nonce, box = await message.send(get_data_only=True)  # type: ignore[attr-defined]
        return messages.parse(crypto.unpad(crypto.open_box(PRIVATE_KEY, their_key, nonce, box)))

    assert await opened(peer.text("Grüße, 早上好 👋")) == messages.Text("Grüße, 早上好 👋")
    receipt = await opened(peer.receipt(b"\x01" * 8, b"\x02" * 8))
    assert receipt == messages.Receipt(2, ("01" * 8, "02" * 8))
    image = await opened(peer.image(b"\xff\xd8 jpeg bytes"))
    assert isinstance(image, messages.Image) and image.size == len(b"\xff\xd8 jpeg bytes")
    file = await opened(peer.file(b"%PDF-1.7", "application/pdf", "receipt.pdf", caption="the bill"))
    assert isinstance(file, messages.File)
    assert (file.mime, file.name, file.size, file.caption) == ("application/pdf", "receipt.pdf", 8, "the bill")
    assert file.blob_id in gateway.blobs and crypto.open_file(file.key, gateway.blobs[file.blob_id]) == b"%PDF-1.7"
    assert GATEWAY_ID.startswith("*")


@pytest.mark.parametrize(
    "plaintext",
    [
        b"",
        b"\x01\xff\xfe",
        b"\x02short",
        b"\x17not json",
        b"\x17[1]",
        b'\x17{"b":"zz","k":"00","m":"a","s":1}',
        b"\x80",
    ],
)
def test_malformed_content_is_refused(plaintext: bytes) -> None:
    with pytest.raises(MalformedMessage):
        messages.parse(plaintext)


def test_unknown_types_are_marked_unsupported() -> None:
    assert messages.parse(b"\x90\x01") == messages.Unsupported(0x90)
