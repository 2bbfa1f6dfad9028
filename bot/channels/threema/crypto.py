"""Threema's end-to-end cryptography: the callback MAC, NaCl boxes around messages and images, secret boxes
around files, and the PKCS#7 padding inside every message box (libnacl, as the official SDK uses)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping

import libnacl

from bot.channels.errors import MalformedMessage

NONCE_BYTES = libnacl.crypto_box_NONCEBYTES  # 24
KEY_BYTES = libnacl.crypto_box_PUBLICKEYBYTES  # 32
# File blobs are encrypted with a fresh key each, so a fixed nonce is safe (Threema's file message format).
FILE_NONCE = bytes(23) + b"\x01"
_MAC_FIELDS = ("from", "to", "messageId", "date", "nonce", "box")
_MIN_PADDED = 32  # content + padding is at least this long, so short messages all look alike


def callback_mac(secret: str, form: Mapping[str, str]) -> str:
    """Hex HMAC-SHA256 keyed with the API secret over from‖to‖messageId‖date‖nonce‖box, no separators."""
    message = "".join(form[name] for name in _MAC_FIELDS).encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def mac_matches(secret: str, form: Mapping[str, str]) -> bool:
    """Constant-time check of the callback's `mac` field; False when a MAC field is missing."""
    if any(name not in form for name in (*_MAC_FIELDS, "mac")):
        return False
    return hmac.compare_digest(callback_mac(secret, form).encode(), form["mac"].lower().encode())


def public_key_of(private_key: bytes) -> bytes:
    return libnacl.crypto_scalarmult_base(private_key)


def pad(message: bytes) -> bytes:
    """Random PKCS#7-style padding (1–255 bytes, each the padding length) after a message (type byte + content);
    content and padding together are at least 32 bytes."""
    length = max(secrets.randbelow(255) + 1, _MIN_PADDED - (len(message) - 1))
    return message + bytes([length]) * length


def unpad(data: bytes) -> bytes:
    """Remove and check the padding: every padding byte must equal its length."""
    if not data:
        raise MalformedMessage("empty message")
    length = data[-1]
    if length == 0 or length >= len(data) or data[-length:] != bytes([length]) * length:
        raise MalformedMessage("bad padding")
    return data[:-length]


def seal(private_key: bytes, public_key: bytes, plaintext: bytes) -> tuple[bytes, bytes]:
    """(nonce, box) of `plaintext` from us to the owner of `public_key`, under a fresh random nonce."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    return nonce, libnacl.crypto_box(plaintext, nonce, public_key, private_key)


def open_box(private_key: bytes, public_key: bytes, nonce: bytes, box: bytes) -> bytes:
    try:
        return libnacl.crypto_box_open(box, nonce, public_key, private_key)
    except (ValueError, libnacl.CryptError):
        raise MalformedMessage("the box does not open with our key and the sender's") from None


def seal_file(data: bytes) -> tuple[bytes, bytes]:
    """(key, encrypted blob) for a file message: a fresh secret key with the fixed file nonce."""
    key = secrets.token_bytes(libnacl.crypto_secretbox_KEYBYTES)
    return key, libnacl.crypto_secretbox(data, FILE_NONCE, key)


def open_file(key: bytes, blob: bytes) -> bytes:
    try:
        return libnacl.crypto_secretbox_open(blob, FILE_NONCE, key)
    except (ValueError, libnacl.CryptError):
        raise MalformedMessage("the file blob does not open with its key") from None
