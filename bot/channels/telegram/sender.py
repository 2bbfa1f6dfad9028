"""Replies out to Telegram: text split at 4096 characters as safe HTML, buttons for options, charts as photos,
the typing action while the worker thinks, and the streaming draft sink for private chats."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import structlog
from aiogram import Bot
from aiogram.exceptions import (
    TelegramAPIError,
    TelegramBadRequest,
    TelegramForbiddenError,
    TelegramMigrateToChat,
    TelegramNotFound,
    TelegramRetryAfter,
)
from aiogram.types import BufferedInputFile, InlineKeyboardButton, InlineKeyboardMarkup, ReplyParameters

from bot.channels.media import LoadMedia
from bot.channels.telegram.checklists import tick_buttons
from bot.channels.telegram.drafts import DraftSink
from bot.channels.telegram.formatting import ButtonAnswer, Recipient, split_text, to_html
from engine.channel_settings import TelegramSettings
from engine.errors import DeliveryError
from engine.llm_types import EventSink
from tools.storage.outbox import OutboxRow

log = structlog.get_logger()

MAX_BUTTONS = 10
_TYPING_TIMEOUT_S = 3.0
_PROGRESS_MEMORY = 1000


class TelegramSender:
    """The ReplySender of channel "telegram"; also shows typing and streams drafts (see worker.jobs)."""

    def __init__(self, bot: Bot, load_media: LoadMedia, settings: TelegramSettings) -> None:
        self._bot = bot
        self._load_media = load_media
        self._settings = settings
        # Pieces already delivered of rows whose delivery failed midway, so that a retry in this process does
        # not send them twice. (A retry in another worker may repeat them: better twice than never.)
        self._progress: dict[int, int] = {}

    async def send(self, row: OutboxRow) -> None:
        try:
            to = Recipient.decode(row.recipient)
        except ValueError:
            raise DeliveryError(f"not a Telegram chat: {row.recipient!r}", transient=False) from None
        pieces = split_text(row.text)
        keyboard = _keyboard(row.payload)
        steps: list[Callable[[], Awaitable[None]]] = [
            functools.partial(self._send_text, to, piece, keyboard if n == len(pieces) - 1 else None, quote=n == 0)
            for n, piece in enumerate(pieces)
        ]
        steps += [
            functools.partial(self._send_photo, to, row.household_id, int(media_id))
            for media_id in row.payload.get("media_ids") or ()
        ]
        done = self._progress.pop(row.id, 0)
        try:
            for step in steps[done:]:
                await step()
                done += 1
        except TelegramAPIError as exc:
            raise _delivery_error(exc) from exc
        finally:
            if 0 < done < len(steps) and len(self._progress) < _PROGRESS_MEMORY:
                self._progress[row.id] = done

    async def typing(self, recipient: str) -> None:
        """Best effort: a lost typing action costs nothing."""
        try:
            async with asyncio.timeout(_TYPING_TIMEOUT_S):
                await self._bot.send_chat_action(Recipient.decode(recipient).chat_id, "typing")
        except (TelegramAPIError, TimeoutError, ValueError) as exc:
            log.info("telegram.typing.failed", error=type(exc).__name__)

    def stream_sink(self, recipient: str, inbox_id: int) -> EventSink | None:
        """A draft that grows while the reply is written, in private chats when TELEGRAM_STREAM_DRAFTS is on."""
        if not self._settings.stream_drafts:
            return None
        try:
            to = Recipient.decode(recipient)
        except ValueError:
            return None
        if to.chat_id <= 0 or to.reply_to_message_id is not None:  # drafts exist only in private chats
            return None
        return DraftSink(self._bot, to.chat_id, inbox_id, self._settings.draft_interval_s)

    async def _send_text(self, to: Recipient, text: str, keyboard: InlineKeyboardMarkup | None, *, quote: bool) -> None:
        quoted = None
        if quote and to.reply_to_message_id is not None:
            quoted = ReplyParameters(message_id=to.reply_to_message_id, allow_sending_without_reply=True)
        try:
            await self._bot.send_message(
                to.chat_id, to_html(text), parse_mode="HTML", reply_markup=keyboard, reply_parameters=quoted
            )
        except TelegramBadRequest as exc:
            if "parse" not in exc.message.lower() and "entit" not in exc.message.lower():
                raise
            # Our HTML is balanced by construction; should Telegram still refuse it, the words matter more.
            log.warning("telegram.html.refused")
            await self._bot.send_message(
                to.chat_id, text, parse_mode=None, reply_markup=keyboard, reply_parameters=quoted
            )

    async def _send_photo(self, to: Recipient, household_id: int, media_id: int) -> None:
        mime, data = await self._load_media(household_id, media_id)
        extension = mime.split("/")[-1] if mime.startswith("image/") else "png"
        await self._bot.send_photo(to.chat_id, BufferedInputFile(data, filename=f"chart-{media_id}.{extension}"))


def _keyboard(payload: Mapping[str, Any]) -> InlineKeyboardMarkup | None:
    """One button per row (labels are sentences, not digits); a reminder's buttons carry its id; a list shown
    in the reply gets a tick button per item."""
    options = [str(option) for option in payload.get("options") or ()][:MAX_BUTTONS]
    ticks = tick_buttons(payload)
    if not options and not ticks:
        return None
    reminder_id = payload.get("reminder_id") if payload.get("kind") == "reminder" else None
    rows = [
        [
            InlineKeyboardButton(
                text=option[:200],
                callback_data=ButtonAnswer(index, None if reminder_id is None else int(reminder_id)).encode(),
            )
        ]
        for index, option in enumerate(options)
    ]
    return InlineKeyboardMarkup(inline_keyboard=rows + ticks)


def _delivery_error(exc: TelegramAPIError) -> DeliveryError:
    if isinstance(exc, TelegramRetryAfter):
        return DeliveryError(
            f"telegram flood control: retry after {exc.retry_after}s", transient=True, retry_after_s=exc.retry_after
        )
    if isinstance(exc, TelegramForbiddenError):
        return DeliveryError(f"telegram refused: {exc.message}", transient=False)  # blocked, kicked, deactivated
    if isinstance(exc, TelegramMigrateToChat):
        return DeliveryError(f"the group moved to chat {exc.migrate_to_chat_id}", transient=False)
    if isinstance(exc, TelegramBadRequest | TelegramNotFound):
        return DeliveryError(f"telegram rejected the message: {exc.message}", transient=False)  # chat not found…
    return DeliveryError(f"telegram unreachable: {type(exc).__name__}: {exc.message}", transient=True)  # network, 5xx
