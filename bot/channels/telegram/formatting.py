"""Text for Telegram: split at its 4096-character limit, rendered as HTML that model text can never break,
and the small codes that travel in recipients and button data."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

MESSAGE_LIMIT = 4096  # characters of visible text per message
CALLBACK_DATA_LIMIT = 64  # bytes

_CODE_BLOCK = re.compile(r"```(?:[A-Za-z0-9_+-]*\n)?(.+?)```", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")


def split_text(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Pieces of at most `limit` characters, cut at a paragraph break, else a line break, else a space, and
    only mid-word when a single word is longer than the limit."""
    text = text.strip()
    pieces: list[str] = []
    while len(text) > limit:
        window = text[: limit + 1]
        cut = -1
        for separator in ("\n\n", "\n", " "):
            cut = window.rfind(separator, 0, limit + 1)
            if cut > 0:
                break
        if cut <= 0:
            cut = limit
        pieces.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    if text:
        pieces.append(text)
    return pieces


def to_html(text: str) -> str:
    """Plain model text as Telegram HTML: everything escaped, then only ``` blocks, `code` and **bold** turned
    into tags, each closed on the spot, so no model output can leave the parse mode unbalanced. The visible
    text never gets longer, so a piece from `split_text` stays within the limit."""
    escaped = html.escape(text, quote=False)
    kept: list[str] = []

    def keep(tag: str) -> Callable[[re.Match[str]], str]:
        def replace(match: re.Match[str]) -> str:
            kept.append(f"<{tag}>{match.group(1)}</{tag}>")
            return f"\x00{len(kept) - 1}\x00"

        return replace

    # Code first and set aside, so nothing inside it is read as bold.
    escaped = _CODE_BLOCK.sub(keep("pre"), escaped.replace("\x00", ""))
    escaped = _INLINE_CODE.sub(keep("code"), escaped)
    escaped = _BOLD.sub(r"<b>\1</b>", escaped)
    return re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], escaped)


@dataclass(frozen=True)
class Recipient:
    """Where a reply goes: the chat, and in groups the member's message it quotes.

    Written into the outbox row's `recipient` as `chat_id` or `chat_id:message_id`, so the sender needs
    nothing but the row."""

    chat_id: int
    reply_to_message_id: int | None = None

    def encode(self) -> str:
        if self.reply_to_message_id is None:
            return str(self.chat_id)
        return f"{self.chat_id}:{self.reply_to_message_id}"

    @classmethod
    def decode(cls, value: str) -> Recipient:
        """Raises ValueError for anything that is not a Telegram chat address."""
        chat, _, message = value.partition(":")
        return cls(int(chat), int(message) if message else None)


@dataclass(frozen=True)
class ButtonAnswer:
    """What a pressed inline button stands for: option `index` of a reply, or of a reminder's notice."""

    index: int
    reminder_id: int | None = None

    def encode(self) -> str:
        data = f"o:{self.index}" if self.reminder_id is None else f"r:{self.reminder_id}:{self.index}"
        assert len(data.encode()) <= CALLBACK_DATA_LIMIT
        return data

    @classmethod
    def decode(cls, data: str) -> ButtonAnswer | None:
        """`None` for data this bot did not write (old keyboards, forged callbacks)."""
        parts = data.split(":")
        try:
            if parts[0] == "o" and len(parts) == 2:
                return cls(int(parts[1]))
            if parts[0] == "r" and len(parts) == 3:
                return cls(int(parts[2]), int(parts[1]))
        except ValueError:
            return None
        return None

    def payload(self) -> dict[str, object]:
        """The inbox payload that tells the engine which notice the member answered."""
        if self.reminder_id is None:
            return {"answers": {"kind": "reply"}}
        return {"answers": {"kind": "reminder", "reminder_id": self.reminder_id}}
