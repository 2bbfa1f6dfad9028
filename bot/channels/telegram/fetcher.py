"""Attachment bytes from Telegram (getFile, then the file download), fetched by the worker, never the webhook."""

from __future__ import annotations

import io

import aiohttp
from aiogram import Bot
from aiogram.exceptions import TelegramAPIError

from bot.channels.errors import TelegramFetchError
from engine.domain import Attachment

MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024  # the Bot API's own limit for getFile


class TelegramFetcher:
    """The AttachmentFetcher of channel "telegram": `Attachment.ref` is the file_id."""

    def __init__(self, bot: Bot) -> None:
        self._bot = bot

    async def fetch(self, attachment: Attachment) -> bytes:
        if not attachment.ref:
            raise TelegramFetchError("the attachment has no Telegram file_id")
        try:
            file = await self._bot.get_file(attachment.ref)
            if file.file_size is not None and file.file_size > MAX_DOWNLOAD_BYTES:
                raise TelegramFetchError(f"the file is larger than {MAX_DOWNLOAD_BYTES} bytes")
            if not file.file_path:
                raise TelegramFetchError("Telegram gave no path for the file")
            buffer = io.BytesIO()
            await self._bot.download_file(file.file_path, destination=buffer)
        except TelegramAPIError as exc:
            raise TelegramFetchError(f"telegram: {type(exc).__name__}: {exc.message}", transient=True) from exc
        except aiohttp.ClientResponseError as exc:
            raise TelegramFetchError(f"telegram file download: HTTP {exc.status}", transient=exc.status != 404) from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TelegramFetchError(f"telegram file download: {type(exc).__name__}", transient=True) from exc
        return buffer.getvalue()
