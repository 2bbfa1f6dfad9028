"""The streaming draft of a private chat: the reply grows on screen while the model writes it.

A draft is an ephemeral preview (`sendMessageDraft`); the outbox's final `sendMessage` replaces it. Updates
are throttled (Telegram's flood limits count them), and any failure just ends the preview: the real reply
still comes through the outbox.
"""

from __future__ import annotations

import time

import structlog
from aiogram import Bot
from aiogram.exceptions import TelegramAPIError

from bot.channels.telegram.formatting import MESSAGE_LIMIT
from engine.llm_types import StreamEvent

log = structlog.get_logger()


class DraftSink:
    """An EventSink that turns `content_delta` events into throttled draft updates."""

    def __init__(self, bot: Bot, chat_id: int, inbox_id: int, interval_s: float) -> None:
        self._bot = bot
        self._chat_id = chat_id
        self._draft_id = inbox_id % 2_000_000_000 + 1  # non-zero, and the same for every attempt of a message
        self._interval_s = interval_s
        self._text = ""
        self._last_push = float("-inf")
        self._broken = False
        self.pushed = 0

    async def __call__(self, event: StreamEvent) -> None:
        if self._broken:
            return
        if event.type == "stream_start":
            self._text = ""  # a retried job starts its reply again
            await self._push()  # an empty draft shows "Thinking…"
            self._last_push = float("-inf")  # the first words show at once
        elif event.type == "content_delta":
            self._text += str(event.data.get("text", ""))
            if time.monotonic() - self._last_push >= self._interval_s:
                await self._push()

    async def _push(self) -> None:
        self._last_push = time.monotonic()
        try:
            await self._bot.send_message_draft(
                chat_id=self._chat_id, draft_id=self._draft_id, text=self._text[:MESSAGE_LIMIT], parse_mode=None
            )
            self.pushed += 1
        except TelegramAPIError as exc:
            self._broken = True
            log.info("telegram.draft.stopped", error=type(exc).__name__)
