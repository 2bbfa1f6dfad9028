"""What a member sends with a chat message from the browser — a photo or receipt, a recorded or chosen voice note, a
PDF, calendar or text file — read from the multipart body under the rules every channel keeps
(`bot.channels.attachments`: which kinds, `CHANNEL_ATTACHMENT_MAX_BYTES`), stored in `media` before the message is
accepted (as the email channel stores its attachments), and tied to the inbox row that took them. The engine's
preprocess step reads them as it reads a Telegram photo or an emailed receipt: OCR, speech-to-text, import.

A file that is not kept is refused with the reason before anything is stored: the browser still holds it and the
message, so nothing the member sent is lost unannounced."""

from __future__ import annotations

import dataclasses
import mimetypes
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiohttp import BodyPartReader, web

from bot.channels import attachments
from bot.web.pages.i18n import Catalog
from engine.channel_settings import ChannelSettings
from engine.deps import Deps
from engine.domain import Attachment
from tools.storage import media
from tools.storage.households import Principal

MAX_FILES = 5
_FIELD_BYTES = 64_000  # a text field: the message (16,000 characters of up to 4 bytes) or its client id
_CHUNK = 256 * 1024


@dataclass(frozen=True)
class Upload:
    kind: str  # "image", "voice" or "file", as the engine's `Attachment.kind`
    mime: str
    name: str | None
    data: bytes


@dataclass(frozen=True)
class ChatForm:
    """A chat message sent as multipart/form-data: its fields and the files that came with it."""

    text: str
    client_message_id: str
    files: tuple[Upload, ...]


class Refused(Exception):
    """A body the chat does not take; `status` and the member's `reason` go back to the browser as JSON."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


async def read_form(request: web.Request, settings: ChannelSettings, t: Catalog) -> ChatForm:
    """The message's fields and files, each file checked as it streams in (a file over the limit is refused after
    reading no more than the limit, whatever the body's size)."""
    fields: dict[str, str] = {}
    files: list[Upload] = []
    reader = await request.multipart()
    while (part := await reader.next()) is not None:
        if not isinstance(part, BodyPartReader):
            raise Refused(400, "Nested multipart bodies are not taken")
        if part.filename is not None:
            if len(files) == MAX_FILES:
                raise Refused(400, t("chat.file_many", count=MAX_FILES))
            files.append(await _file(part, settings, t))
        elif part.name in ("text", "client_message_id"):
            fields[part.name] = (await _bounded(part, _FIELD_BYTES, Refused(400, "A field is too long"))).decode(
                "utf-8", errors="replace"
            )
    return ChatForm(fields.get("text", "").strip(), fields.get("client_message_id", ""), tuple(files))


async def _file(part: BodyPartReader, settings: ChannelSettings, t: Catalog) -> Upload:
    name = part.filename or None
    mime = _mime(part.headers.get("Content-Type", ""), name)
    if attachments.refusal(settings, mime, name, 0) is not None:
        raise Refused(415, t("chat.file_kind", name=name or mime))
    limit = settings.attachment_max_bytes
    too_large = Refused(413, t("chat.file_large", name=name or mime, size=_size(limit)))
    data = await _bounded(part, limit, too_large)
    if not data:
        raise Refused(400, t("chat.file_empty", name=name or mime))
    kind = {"image": "image", "audio": "voice"}.get(mime.split("/", 1)[0], "file")
    return Upload(kind, mime, name, data)


def _size(limit: int) -> str:
    return f"{limit / 1024 / 1024:g} MB" if limit >= 1024 * 1024 else f"{limit / 1024:.0f} KB"


def _mime(given: str, name: str | None) -> str:
    """The file's type without parameters ("audio/webm;codecs=opus" is audio/webm); a browser that does not know it
    sends application/octet-stream, and then the name's suffix tells."""
    mime = given.split(";", 1)[0].strip().lower()
    if mime in ("", "application/octet-stream") and name:
        mime = mimetypes.guess_type(name)[0] or mime
    return mime or "application/octet-stream"


async def _bounded(part: BodyPartReader, limit: int, refused: Refused) -> bytes:
    data = bytearray()
    while chunk := await part.read_chunk(_CHUNK):
        data += chunk
        if len(data) > limit:
            raise refused
    return bytes(data)


@dataclass
class Stored:
    media_ids: list[int] = dataclasses.field(default_factory=list)
    attachments: list[Attachment] = dataclasses.field(default_factory=list)
    inbox_id: int | None = None  # the new inbox row that took them

    def payload(self) -> list[dict[str, object]]:
        return [dataclasses.asdict(attachment) for attachment in self.attachments]


@asynccontextmanager
async def stored(deps: Deps, principal: Principal, files: tuple[Upload, ...]) -> AsyncIterator[Stored]:
    """The files in `media` as the message's attachments. Set `inbox_id` once an inbox row took the message: the
    files are tied to it; otherwise (a resend of a message already taken, a failure) they are deleted again."""
    kept = Stored()
    if files:
        async with deps.db.household(principal.household_id, principal.user_id) as conn:
            for upload in files:
                media_id = await media.save(
                    conn, principal.household_id, kind=upload.kind, mime=upload.mime, data=upload.data
                )
                kept.media_ids.append(media_id)
                kept.attachments.append(Attachment(upload.kind, upload.mime, media_id=media_id, name=upload.name))
    try:
        yield kept
    finally:
        if kept.media_ids:
            async with deps.db.household(principal.household_id, principal.user_id) as conn:
                if kept.inbox_id is not None:
                    await media.link_to_inbox(conn, kept.media_ids, kept.inbox_id)
                else:
                    await media.discard(conn, kept.media_ids)
