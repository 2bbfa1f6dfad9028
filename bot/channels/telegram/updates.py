"""Reading a Telegram message: is it for us, what did the member write, what came with it."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from aiogram.types import Message, PhotoSize

from bot.channels.attachments import Dropped, refusal
from bot.channels.telegram.formatting import Recipient
from engine.channel_settings import ChannelSettings
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
    dropped: tuple[Dropped, ...] = ()  # files not kept (`bot.channels.attachments`), for a reply naming them

    def payload_attachments(self) -> list[dict[str, Any]]:
        return [dataclasses.asdict(attachment) for attachment in self.attachments]


def read_message(message: Message, bot_id: int, username: str, limits: ChannelSettings) -> Read | None:
    """The message's content, or `None` when it is not for us: in groups only messages that mention the bot,
    reply to it or name it in a command count; messages with nothing we can read (stickers, polls) neither.
    Files over the channels' limits are not kept but named in `dropped`."""
    text = message.text if message.text is not None else (message.caption or "")
    if message.chat.type in GROUPS and not _addressed(message, text, bot_id, username):
        return None
    attachments, dropped = _kept(_attachments(message), limits)
    start = _START.match(text)
    if start is not None and _for_us(start.group("bot"), username):
        code = start.group("code")
        return Read(text=text.strip(), join_code=code.strip() if code else None, attachments=(), is_start=True)
    text = _without_mention(text, username).strip()
    if not text and not attachments and not dropped:
        return None
    return Read(text=text, join_code=None, attachments=attachments, dropped=dropped)


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


def _attachments(message: Message) -> list[tuple[Attachment, int]]:
    """Handles only, with the size Telegram states: the bytes are fetched by the worker (TelegramFetcher), never in
    the webhook."""
    found: list[tuple[Attachment, int]] = []
    if message.photo:
        photo = _largest(message.photo)
        found.append((Attachment(kind="image", mime="image/jpeg", ref=photo.file_id), photo.file_size or 0))
    if message.document is not None:
        doc = message.document
        mime = doc.mime_type or "application/octet-stream"
        kind = "image" if mime.startswith("image/") else "file"
        found.append((Attachment(kind=kind, mime=mime, ref=doc.file_id, name=doc.file_name), doc.file_size or 0))
    if message.voice is not None:
        voice = message.voice
        found.append(
            (Attachment(kind="voice", mime=voice.mime_type or "audio/ogg", ref=voice.file_id), voice.file_size or 0)
        )
    if message.audio is not None:
        audio = message.audio
        mime = audio.mime_type or "audio/mpeg"
        attachment = Attachment(kind="voice", mime=mime, ref=audio.file_id, name=audio.file_name)
        found.append((attachment, audio.file_size or 0))
    return found


def _kept(
    found: list[tuple[Attachment, int]], limits: ChannelSettings
) -> tuple[tuple[Attachment, ...], tuple[Dropped, ...]]:
    kept, dropped = [], []
    for attachment, size in found:
        reason = refusal(limits, attachment.mime, attachment.name, size)
        if reason is None:
            kept.append(attachment)
        else:
            dropped.append(Dropped(attachment.name or attachment.mime, reason))
    return tuple(kept), tuple(dropped)
