"""Reading a Telegram message: is it for us, what did the member write, what came with it."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from aiogram.types import Message, PhotoSize

from bot.channels.telegram.formatting import Recipient
from engine.domain import Attachment

PRIVATE = "private"
GROUPS = frozenset({"group", "supergroup"})

_START = re.compile(r"^/start(?:@(?P<bot>\w+))?(?:\s+(?P<code>\S.*?))?\s*$", re.S | re.I)
_COMMAND = re.compile(r"^/\w+@(?P<bot>\w+)", re.I)


@dataclass(frozen=True)
class Read:
    """What a member's message says, once we know it is addressed to us."""

    text: str
    join_code: str | None
    attachments: tuple[Attachment, ...]
    is_start: bool = False

    def payload_attachments(self) -> list[dict[str, Any]]:
        return [dataclasses.asdict(attachment) for attachment in self.attachments]


def read_message(message: Message, bot_id: int, username: str) -> Read | None:
    """The message's content, or `None` when it is not for us: in groups only messages that mention the bot,
    reply to it or name it in a command count; messages with nothing we can read (stickers, polls) neither."""
    text = message.text if message.text is not None else (message.caption or "")
    if message.chat.type in GROUPS and not _addressed(message, text, bot_id, username):
        return None
    attachments = _attachments(message)
    start = _START.match(text)
    if start is not None and _for_us(start.group("bot"), username):
        code = start.group("code")
        return Read(text=text.strip(), join_code=code.strip() if code else None, attachments=(), is_start=True)
    text = _without_mention(text, username).strip()
    if not text and not attachments:
        return None
    return Read(text=text, join_code=None, attachments=attachments)


def recipient(message: Message) -> Recipient:
    """Replies in groups quote the member's message, so the group sees whom they answer."""
    if message.chat.type in GROUPS:
        return Recipient(message.chat.id, message.message_id)
    return Recipient(message.chat.id)


def _for_us(named: str | None, username: str) -> bool:
    return named is None or named.lower() == username.lower()


def _addressed(message: Message, text: str, bot_id: int, username: str) -> bool:
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == bot_id:
        return True
    command = _COMMAND.match(text)
    if command is not None:
        return _for_us(command.group("bot"), username)
    handle = "@" + username.lower()
    for entity in message.entities or message.caption_entities or ():
        if entity.type == "mention" and entity.extract_from(text).lower() == handle:
            return True
        if entity.type == "text_mention" and entity.user is not None and entity.user.id == bot_id:
            return True
    return False


def _without_mention(text: str, username: str) -> str:
    return re.sub(rf"(?<!\w)@{re.escape(username)}\b", "", text, flags=re.I)


def _largest(photos: list[PhotoSize]) -> PhotoSize:
    return max(photos, key=lambda p: (p.width * p.height, p.file_size or 0))


def _attachments(message: Message) -> tuple[Attachment, ...]:
    """Handles only: the bytes are fetched by the worker (TelegramFetcher), never in the webhook."""
    found: list[Attachment] = []
    if message.photo:
        found.append(Attachment(kind="image", mime="image/jpeg", ref=_largest(message.photo).file_id))
    if message.document is not None:
        doc = message.document
        mime = doc.mime_type or "application/octet-stream"
        kind = "image" if mime.startswith("image/") else "file"
        found.append(Attachment(kind=kind, mime=mime, ref=doc.file_id, name=doc.file_name))
    if message.voice is not None:
        found.append(Attachment(kind="voice", mime=message.voice.mime_type or "audio/ogg", ref=message.voice.file_id))
    if message.audio is not None:
        audio = message.audio
        mime = audio.mime_type or "audio/mpeg"
        found.append(Attachment(kind="voice", mime=mime, ref=audio.file_id, name=audio.file_name))
    return tuple(found)
