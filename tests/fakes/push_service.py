"""A browser's push service on loopback, speaking RFC 8030 as FCM or Mozilla's autopush do: it takes a push message
`POST /push/<subscriber>`, checks its VAPID authorisation (RFC 8292: an ES256 JWT for this origin, signed by the key
it names) and, holding the subscriber's private key as the browser would, decrypts its payload (RFC 8291,
aes128gcm). A test queues the statuses it should answer (201 by default; 410 for a subscription that is gone)."""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import http_ece
import pytest
from aiohttp import web
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Subscriber:
    """One browser's push subscription: its key pair and auth secret, as PushManager.subscribe() makes them."""

    name: str
    private_key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def p256dh(self) -> str:
        point = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return b64url(point)


@dataclass
class Received:
    """A push message the service accepted (or refused), as checked and decrypted."""

    subscriber: str
    vapid_key: str  # the application server key it was signed with ('k')
    claims: dict[str, Any]
    headers: dict[str, str]
    payload: dict[str, Any]
    status: int


class FakePushService:
    def __init__(self) -> None:
        self._subscribers: dict[str, Subscriber] = {}
        self.received: list[Received] = []
        self.answers: list[int] = []  # statuses to answer next, first first; then 201
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/push/{name}", self._push)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def subscriber(self, name: str) -> Subscriber:
        self._subscribers[name] = Subscriber(name)
        return self._subscribers[name]

    def endpoint(self, subscriber: Subscriber) -> str:
        return f"{self.base_url}/push/{subscriber.name}"

    def to(self, subscriber: Subscriber) -> list[Received]:
        return [r for r in self.received if r.subscriber == subscriber.name]

    async def _push(self, request: web.Request) -> web.Response:
        subscriber = self._subscribers.get(request.match_info["name"])
        if subscriber is None:
            return web.Response(status=404)
        key, claims = self._check_vapid(request.headers.get("Authorization", ""))
        body = await request.read()
        if request.headers.get("Content-Encoding") != "aes128gcm":
            raise web.HTTPBadRequest(text="only aes128gcm")
        plain = http_ece.decrypt(
            body, private_key=subscriber.private_key, auth_secret=subscriber.auth, version="aes128gcm"
        )
        status = self.answers.pop(0) if self.answers else 201
        headers = {name: request.headers[name] for name in ("TTL", "Topic", "Urgency") if name in request.headers}
        self.received.append(Received(subscriber.name, key, claims, headers, json.loads(plain), status))
        return web.Response(status=status, headers={"Retry-After": "7"} if status == 429 else None)

    def _check_vapid(self, authorization: str) -> tuple[str, dict[str, Any]]:
        """RFC 8292: `vapid t=<JWT>, k=<public key>`; the JWT is ES256 over header.claims, for this origin."""
        scheme, _, params = authorization.partition(" ")
        if scheme.lower() != "vapid":
            raise web.HTTPUnauthorized(text="no vapid authorisation")
        parts = dict(part.strip().split("=", 1) for part in params.split(","))
        token, key = parts["t"], parts["k"]
        header_b64, claims_b64, signature_b64 = token.split(".")
        if json.loads(unb64url(header_b64)) != {"typ": "JWT", "alg": "ES256"}:
            raise web.HTTPUnauthorized(text="not an ES256 JWT")
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(key))
        signature = unb64url(signature_b64)
        der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
        try:
            public.verify(der, f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            raise web.HTTPUnauthorized(text="bad vapid signature") from None
        claims = json.loads(unb64url(claims_b64))
        if claims.get("aud") != self.base_url or not 0 < claims["exp"] - time.time() <= 24 * 3600:
            raise web.HTTPUnauthorized(text="wrong audience or expiry")
        if not str(claims.get("sub", "")).startswith(("mailto:", "https://")):
            raise web.HTTPUnauthorized(text="no contact")
        return key, claims


@pytest.fixture(scope="module")
async def push_service() -> AsyncIterator[FakePushService]:
    """A push service on loopback for one test module (a pytest plugin: tests/conftest.py loads it)."""
    service = FakePushService()
    await service.start()
    yield service
    await service.stop()
