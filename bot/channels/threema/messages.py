"""The plaintext inside a Threema box, after the padding is removed: one type byte, then the content."""

from __future__ import annotations

import enum
import json
import re
import struct
from dataclasses import dataclass

from bot.channels.errors import MalformedMessage
from bot.channels.threema.crypto import KEY_BYTES, NONCE_BYTES

BLOB_ID_BYTES = 16
_IMAGE = struct.Struct(f"<{BLOB_ID_BYTES}sI{NONCE_BYTES}s")  # blob id, size, nonce
_HEX_BLOB_ID = re.compile(rf"[0-9a-f]{{{BLOB_ID_BYTES * 2}}}")
_HEX_KEY = re.compile(rf"[0-9a-fA-F]{{{KEY_BYTES * 2}}}")


class MessageType(enum.IntEnum):
    TEXT = 0x01
    IMAGE = 0x02
    FILE = 0x17
    DELIVERY_RECEIPT = 0x80


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Image:
    """An image blob encrypted with the sender's and our keys under `nonce` (always JPEG from the apps)."""

    blob_id: str
    size: int
    nonce: bytes


@dataclass(frozen=True)
class File:
    """A file blob encrypted with its own secret `key`; an image, a voice note or any document."""

    blob_id: str
    key: bytes
    mime: str
    name: str
    size: int
    caption: str | None = None


@dataclass(frozen=True)
class Receipt:
    status: int  # 1 received, 2 read, 3 acknowledged, 4 declined
    message_ids: tuple[str, ...]


@dataclass(frozen=True)
class Unsupported:
    """A type FAA does not handle (video, location, typing indicators, group messages…)."""

    type: int


Content = Text | Image | File | Receipt | Unsupported


def parse(plaintext: bytes) -> Content:
    """What an unpadded message says; `MalformedMessage` when the content does not match its type."""
    if not plaintext:
        raise MalformedMessage("no type byte")
    type_, body = plaintext[0], plaintext[1:]
    if type_ == MessageType.TEXT:
        return Text(_utf8(body))
    if type_ == MessageType.IMAGE:
        return _image(body)
    if type_ == MessageType.FILE:
        return _file(body)
    if type_ == MessageType.DELIVERY_RECEIPT:
        return _receipt(body)
    return Unsupported(type_)


def text(value: str) -> bytes:
    return bytes([MessageType.TEXT]) + value.encode()


def file(blob_id: str, key: bytes, *, mime: str, name: str, size: int, caption: str | None = None) -> bytes:
    """A file message; images are marked to be shown inline (rendering type 1, "media")."""
    media = 1 if mime.startswith("image/") else 0
    content: dict[str, object] = {"b": blob_id, "k": key.hex(), "m": mime, "n": name, "s": size, "i": media, "j": media}
    if caption:
        content["d"] = caption
    return bytes([MessageType.FILE]) + json.dumps(content, separators=(",", ":"), ensure_ascii=False).encode()


def _utf8(body: bytes) -> str:
    try:
        return body.decode()
    except UnicodeDecodeError:
        raise MalformedMessage("text is not UTF-8") from None


def _image(body: bytes) -> Image:
    if len(body) != _IMAGE.size:
        raise MalformedMessage("image message of the wrong length")
    blob_id, size, nonce = _IMAGE.unpack(body)
    return Image(blob_id.hex(), size, nonce)


def _file(body: bytes) -> File:
    try:
        content = json.loads(_utf8(body))
    except json.JSONDecodeError:
        raise MalformedMessage("file message is not JSON") from None
    if not isinstance(content, dict):
        raise MalformedMessage("file message is not a JSON object")
    blob_id, key, mime, name, size = (content.get(k) for k in ("b", "k", "m", "n", "s"))
    caption = content.get("d")
    if not (isinstance(blob_id, str) and _HEX_BLOB_ID.fullmatch(blob_id)):
        raise MalformedMessage("file message without a valid blob id")
    if not (isinstance(key, str) and _HEX_KEY.fullmatch(key)):
        raise MalformedMessage("file message without a valid key")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise MalformedMessage("file message without a valid size")
    if not isinstance(mime, str) or not mime or (caption is not None and not isinstance(caption, str)):
        raise MalformedMessage("file message with a bad MIME type or caption")
    safe_name = name if isinstance(name, str) and name else "file"
    return File(blob_id, bytes.fromhex(key), mime.lower(), safe_name[:255], size, caption or None)


def _receipt(body: bytes) -> Receipt:
    if len(body) < 9 or (len(body) - 1) % 8:
        raise MalformedMessage("delivery receipt of the wrong length")
    ids = tuple(body[i : i + 8].hex() for i in range(1, len(body), 8))
    return Receipt(body[0], ids)
