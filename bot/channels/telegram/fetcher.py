"""Attachment bytes from Telegram (getFile, then the file download), fetched by the worker, never the webhook."""

from __future__ import annotations

import io

import aiohttp
from aiogram import Bot
from aiogram.exceptions import TelegramAPIError

from engine.domain import Attachment
from engine.errors import AttachmentError

MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024  # the Bot API's own limit for getFile


class TelegramFetchError(AttachmentError):
    """An attachment could not be downloaded; `permanent` when retrying cannot help (too big, gone)."""

    def __init__(self, reason: str, *, permanent: bool = False) -> None:
        super().__init__(reason, retryable=not permanent)
        self.permanent = permanent


class TelegramFetcher:
    """The AttachmentFetcher of channel "telegram": `Attachment.ref` is the file_id."""

    def __init__(self, bot: Bot) -> None:
        self._bot = bot

    async def fetch(self, attachment: Attachment) -> bytes:
        if not attachment.ref:
            raise TelegramFetchError("the attachment has no Telegram file_id", permanent=True)
        try:
            file = await self._bot.get_file(attachment.ref)
            if file.file_size is not None and file.file_size > MAX_DOWNLOAD_BYTES:
                raise TelegramFetchError(f"the file is larger than {MAX_DOWNLOAD_BYTES} bytes", permanent=True)
            if not file.file_path:
                raise TelegramFetchError("Telegram gave no path for the file", permanent=True)
            buffer = io.BytesIO()
            await self._bot.download_file(file.file_path, destination=buffer)
        except TelegramAPIError as exc:
            raise TelegramFetchError(f"telegram: {type(exc).__name__}: {exc.message}") from exc
        except aiohttp.ClientResponseError as exc:
            raise TelegramFetchError(f"telegram file download: HTTP {exc.status}", permanent=exc.status == 404) from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TelegramFetchError(f"telegram file download: {type(exc).__name__}") from exc
        return buffer.getvalue()
