"""A fake Threema Gateway over HTTP (aiohttp) and Threema users driven by the official SDK (`threema.gateway`).

The fake speaks the Gateway's API as the SDK's own test server does: public keys, capabilities, send_e2e,
upload_blob and blobs, with the from/secret check. Users are SDK connections pointed at the fake: they encrypt
messages to FAA exactly as a Threema client does (the SDK's e2e message classes), and decrypt what FAA sends.
"""

from __future__ import annotations

import asyncio
import binascii
import datetime
import hashlib
import hmac
import itertools
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import libnacl
from aiohttp import web
from threema.gateway import Connection, e2e

_PRODUCTION = "https://msgapi.threema.ch"


@dataclass
class Sent:
    """One send_e2e request the fake accepted."""

    sender: str
    to: str
    nonce: bytes
    box: bytes


@dataclass
class FakeGateway:
    secrets: dict[str, str] = field(default_factory=dict)  # API identity -> secret
    keys: dict[str, bytes] = field(default_factory=dict)  # Threema ID -> public key
    sent: list[Sent] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)  # "GET /pubkeys/ANNA1234"...
    fail_next: dict[str, list[int]] = field(default_factory=dict)  # route name -> statuses to answer next
    base_url: str = ""
    _runner: web.AppRunner | None = None
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def start(self) -> str:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes(
            [
                web.get("/pubkeys/{id}", self._pubkey),
                web.get("/capabilities/{id}", self._capabilities),
                web.post("/send_e2e", self._send_e2e),
                web.post("/upload_blob", self._upload),
                web.get("/blobs/{blob_id}", self._download),
            ]
        )
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        host, port = self._runner.addresses[0][:2]
        self.base_url = f"http://{host}:{port}"
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def reset(self) -> None:
        self.sent.clear()
        self.requests.clear()
        self.fail_next.clear()

    async def wait_sent(self, count: int, timeout_s: float = 30.0) -> list[Sent]:
        """Wait (up to a generous bound, not a timing assertion) until `count` messages were sent."""
        async with asyncio.timeout(timeout_s):
            async with self._changed:
                await self._changed.wait_for(lambda: len(self.sent) >= count)
        return list(self.sent)

    def _authorised(self, identity: str | None, secret: str | None) -> bool:
        return identity is not None and self.secrets.get(identity) == secret

    def _failure(self, route: str) -> web.Response | None:
        statuses = self.fail_next.get(route)
        if statuses:
            status = statuses.pop(0)
            return web.Response(status=status, headers={"Retry-After": "7"} if status == 429 else None)
        return None

    async def _pubkey(self, request: web.Request) -> web.Response:
        self.requests.append(f"GET /pubkeys/{request.match_info['id']}")
        if not self._authorised(request.query.get("from"), request.query.get("secret")):
            return web.Response(status=401)
        if failure := self._failure("pubkeys"):
            return failure
        key = self.keys.get(request.match_info["id"])
        return web.Response(status=404) if key is None else web.Response(text=key.hex())

    async def _capabilities(self, request: web.Request) -> web.Response:
        if not self._authorised(request.query.get("from"), request.query.get("secret")):
            return web.Response(status=401)
        return web.Response(text="text,image,video,file")

    async def _send_e2e(self, request: web.Request) -> web.Response:
        post = await request.post()
        self.requests.append("POST /send_e2e")
        if not self._authorised(str(post.get("from")), str(post.get("secret"))):
            return web.Response(status=401)
        if failure := self._failure("send_e2e"):
            return failure
        if str(post["to"]) not in self.keys:
            return web.Response(status=400)
        nonce, box = binascii.unhexlify(str(post["nonce"])), binascii.unhexlify(str(post["box"]))
        if len(nonce) != 24 or len(box) > 7812:
            return web.Response(status=400 if len(nonce) != 24 else 413)
        async with self._changed:
            self.sent.append(Sent(str(post["from"]), str(post["to"]), nonce, box))
            self._changed.notify_all()
        return web.Response(text=secrets.token_hex(8))

    async def _upload(self, request: web.Request) -> web.Response:
        self.requests.append("POST /upload_blob")
        if not self._authorised(request.query.get("from"), request.query.get("secret")):
            return web.Response(status=401)
        if failure := self._failure("upload_blob"):
            return failure
        post = await request.post()
        blob = post["blob"].file.read()  # type: ignore[union-attr]
        blob_id = hashlib.md5(blob).hexdigest()
        self.blobs[blob_id] = blob
        return web.Response(text=blob_id)

    async def _download(self, request: web.Request) -> web.Response:
        self.requests.append(f"GET /blobs/{request.match_info['blob_id']}")
        if not self._authorised(request.query.get("from"), request.query.get("secret")):
            return web.Response(status=401)
        blob = self.blobs.get(request.match_info["blob_id"])
        return web.Response(status=404) if blob is None else web.Response(body=blob)


def keypair() -> tuple[bytes, bytes]:
    """(public, private)."""
    return libnacl.crypto_box_keypair()


_message_ids = itertools.count(1)


@dataclass
class Peer:
    """A Threema user (their app, as the SDK builds its messages) talking to FAA's Gateway ID."""

    identity: str
    connection: Connection
    gateway_id: str
    gateway_secret: str  # the callback is signed with FAA's API secret, as the Gateway does

    @classmethod
    def create(cls, fake: FakeGateway, identity: str, gateway_id: str, gateway_secret: str) -> Peer:
        public, private = keypair()
        fake.keys[identity] = public
        fake.secrets[identity] = f"secret-{identity}"
        connection = Connection(identity, f"secret-{identity}", key=f"private:{private.hex()}")
        connection.urls = {name: url.replace(_PRODUCTION, fake.base_url) for name, url in connection.urls.items()}
        return cls(identity, connection, gateway_id, gateway_secret)

    async def close(self) -> None:
        await self.connection.close()

    def text(self, text: str) -> e2e.TextMessage:
        return e2e.TextMessage(self.connection, to_id=self.gateway_id, text=text)

    def image(self, data: bytes) -> e2e.ImageMessage:
        return e2e.ImageMessage(self.connection, to_id=self.gateway_id, image=data, mime_type="image/jpeg")

    def file(self, data: bytes, mime: str, name: str, caption: str | None = None) -> e2e.FileMessage:
        return e2e.FileMessage(
            self.connection, to_id=self.gateway_id, file_content=data, mime_type=mime, file_name=name, caption=caption
        )

    def receipt(self, *message_ids: bytes) -> e2e.DeliveryReceipt:
        kind = e2e.DeliveryReceipt.ReceiptType.read
        return e2e.DeliveryReceipt(self.connection, to_id=self.gateway_id, receipt_type=kind, message_ids=message_ids)

    async def callback(self, message: e2e.Message, *, message_id: str | None = None, **override: str) -> dict[str, str]:
        """The form the Gateway posts to FAA's callback URL for `message`, signed with FAA's secret."""
        nonce, box = await message.send(get_data_only=True)
        form = {
            "from": self.identity,
            "to": self.gateway_id,
            "messageId": message_id or f"{next(_message_ids):016x}",
            "date": str(int(datetime.datetime.now().timestamp())),
            "nonce": binascii.hexlify(nonce).decode(),
            "box": binascii.hexlify(box).decode(),
            **override,
        }
        form["mac"] = sign(self.gateway_secret, form)
        form["nickname"] = self.identity.title()
        return form

    async def read(self, sent: Sent) -> Any:
        """Decrypt what FAA sent to this user, with the SDK (fetching FAA's key and blobs from the Gateway)."""
        assert sent.to == self.identity
        parameters = {"from_id": sent.sender, "message_id": b"\0" * 8, "date": datetime.datetime.now()}
        return await e2e.Message.receive(self.connection, parameters, sent.nonce, sent.box)

    async def read_all(self, sent: Sequence[Sent]) -> list[Any]:
        return [await self.read(item) for item in sent if item.to == self.identity]


def sign(secret: str, form: dict[str, str]) -> str:
    """The Gateway's callback MAC, written out here independently of FAA's code."""
    message = "".join(form[k] for k in ("from", "to", "messageId", "date", "nonce", "box"))
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()
