"""Downloading an image or file that came with a Threema message, in the worker: fetch the blob, decrypt it.

The attachment's `ref` (set by the callback) is JSON naming the blob and how to open it: image messages are
boxed with the sender's key and a nonce, file messages with a secret key of their own. The key lives in the
inbox payload, inside the database's trust boundary, because the blob is useless without it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.channels.errors import GatewayError, MalformedMessage
from bot.channels.threema import crypto
from bot.channels.threema.gateway import GatewayClient
from bot.channels.threema.messages import File, Image
from engine.domain import Attachment
from engine.errors import AttachmentError

MAX_BLOB_BYTES = 50 * 1024 * 1024
_BOX_OVERHEAD = 16  # the Poly1305 tag in front of every box


class BlobRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    blob: str = Field(pattern=r"^[0-9a-f]{32}$")
    size: int = Field(ge=0, le=MAX_BLOB_BYTES)
    key: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")  # file messages
    nonce: str | None = Field(default=None, pattern=r"^[0-9a-f]{48}$")  # image messages
    sender: str | None = Field(default=None, pattern=r"^[0-9A-Z*][0-9A-Z]{7}$")  # image messages


def ref_for(content: Image | File, sender: str) -> str:
    """The `Attachment.ref` for a received image or file message."""
    fields: dict[str, Any] = {"blob": content.blob_id, "size": content.size}
    if isinstance(content, Image):
        fields.update(nonce=content.nonce.hex(), sender=sender)
    else:
        fields.update(key=content.key.hex())
    return json.dumps(fields, separators=(",", ":"))


class ThreemaFetcher:
    """The `AttachmentFetcher` for channel "threema"."""

    def __init__(self, client: GatewayClient) -> None:
        self._client = client

    async def fetch(self, attachment: Attachment) -> bytes:
        """The decrypted bytes; an `AttachmentError` (transient when the Gateway may answer later) otherwise."""
        try:
            return await self._fetch(attachment)
        except GatewayError as exc:
            raise AttachmentError(f"Threema blob: {exc.reason}", transient=exc.transient) from exc
        except MalformedMessage as exc:
            raise AttachmentError(f"Threema blob: {exc.reason}") from exc

    async def _fetch(self, attachment: Attachment) -> bytes:
        try:
            ref = BlobRef.model_validate_json(attachment.ref or "")
        except ValidationError:
            raise MalformedMessage("not a Threema blob reference") from None
        blob = await self._client.download_blob(ref.blob, max_bytes=ref.size + _BOX_OVERHEAD)
        if ref.key is not None:
            data = crypto.open_file(bytes.fromhex(ref.key), blob)
        elif ref.nonce is not None and ref.sender is not None:
            public_key = await self._client.public_key(ref.sender)
            data = crypto.open_box(self._client.private_key, public_key, bytes.fromhex(ref.nonce), blob)
        else:
            raise MalformedMessage("a Threema blob reference needs a key, or a nonce and a sender")
        if len(data) != ref.size:
            raise MalformedMessage(f"the blob holds {len(data)} bytes where the message announced {ref.size}")
        return data
