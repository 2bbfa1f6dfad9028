"""VAPID keys (RFC 8292): the P-256 key pair a household's pushes are signed with. Only the private value is stored;
the browser subscribes with the public half (its `applicationServerKey`)."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec


def new_private_key() -> bytes:
    """A fresh private value: 32 bytes, big-endian, as `py_vapid.Vapid.from_raw` reads it (base64url)."""
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_numbers().private_value.to_bytes(32, "big")


def public_key(private_value: bytes) -> str:
    """The application server key a browser subscribes with: the uncompressed point, base64url without padding."""
    key = ec.derive_private_key(int.from_bytes(private_value, "big"), ec.SECP256R1())
    point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return b64url(point)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
