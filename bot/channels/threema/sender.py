"""Replies to Threema: each message is a type byte, the content and random padding, boxed for the recipient
and handed to `send_e2e`; charts go up as encrypted blobs and out as file messages."""

from __future__ import annotations

import mimetypes
import re

from bot.channels import numbered
from bot.channels.errors import GatewayError
from bot.channels.media import LoadMedia
from bot.channels.threema import crypto, messages
from bot.channels.threema.gateway import GatewayClient
from engine.errors import DeliveryError
from tools.storage.outbox import OutboxRow

MAX_TEXT_BYTES = 3500  # the Gateway's limit for one text message
_THREEMA_ID = re.compile(r"[0-9A-Z*][0-9A-Z]{7}")


class ThreemaSender:
    """The `ReplySender` for channel "threema"; `row.recipient` is the member's Threema ID."""

    def __init__(self, client: GatewayClient, load_media: LoadMedia) -> None:
        self._client = client
        self._load_media = load_media

    async def send(self, row: OutboxRow) -> None:
        if _THREEMA_ID.fullmatch(row.recipient) is None:
            raise DeliveryError(f"not a Threema ID: {row.recipient!r}", transient=False)
        try:
            public_key = await self._client.public_key(row.recipient)
            text = numbered.render(row.text, row.payload.get("options") or [])
            for piece in chunks(text):
                await send_message(self._client, row.recipient, public_key, messages.text(piece))
            for media_id in row.payload.get("media_ids") or []:
                mime, data = await self._load_media(row.household_id, int(media_id))
                await self._send_file(row.recipient, public_key, data, mime, int(media_id))
        except GatewayError as exc:
            raise DeliveryError(exc.reason, transient=exc.transient, retry_after_s=exc.retry_after_s) from exc

    async def _send_file(self, to: str, public_key: bytes, data: bytes, mime: str, media_id: int) -> None:
        key, blob = crypto.seal_file(data)
        blob_id = await self._client.upload_blob(blob)
        name = f"chart-{media_id}{mimetypes.guess_extension(mime) or ''}"
        content = messages.file(blob_id, key, mime=mime, name=name, size=len(data))
        await send_message(self._client, to, public_key, content)


async def send_message(client: GatewayClient, to: str, public_key: bytes, content: bytes) -> str:
    """Pad, box and send one message (type byte + content); the Gateway's message id."""
    nonce, box = crypto.seal(client.private_key, public_key, crypto.pad(content))
    return await client.send_e2e(to, nonce, box)


async def send_text(client: GatewayClient, to: str, text: str) -> None:
    """A short text straight to a Threema ID (notices to senders who have no household, so no outbox)."""
    public_key = await client.public_key(to)
    for piece in chunks(text):
        await send_message(client, to, public_key, messages.text(piece))


def chunks(text: str, limit: int = MAX_TEXT_BYTES) -> list[str]:
    """`text` in pieces of at most `limit` UTF-8 bytes, cut at a line break or space where one is near."""
    pieces: list[str] = []
    rest = text
    while len(rest.encode()) > limit:
        cut = len(rest.encode()[:limit].decode(errors="ignore"))
        split = cut if rest[cut].isspace() else max(rest.rfind("\n", 0, cut), rest.rfind(" ", 0, cut))
        if split < cut // 2:
            split = cut
        pieces.append(rest[:split].rstrip())
        rest = rest[split:].lstrip()
    pieces.append(rest)
    return [piece for piece in pieces if piece.strip()]
