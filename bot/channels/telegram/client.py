"""The aiogram `Bot` built from settings, and registering the webhook with Telegram."""

from __future__ import annotations

from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from bot.channels.errors import TelegramConfigError
from engine.channel_settings import TelegramSettings

ALLOWED_UPDATES = ("message", "callback_query")  # everything else is never sent to us


def make_bot(settings: TelegramSettings) -> Bot:
    """A Bot on its own aiohttp session (close it with `await bot.session.close()`)."""
    if settings.bot_token is None:
        raise TelegramConfigError("TELEGRAM_BOT_TOKEN is not set")
    session = AiohttpSession(api=TelegramAPIServer.from_base(settings.api_base)) if settings.api_base else None
    return Bot(settings.bot_token.get_secret_value(), session=session)


async def set_webhook(settings: TelegramSettings, url: str | None = None, *, drop_pending: bool = False) -> str:
    """Point Telegram at our webhook with the secret and the update types we handle; returns the URL set."""
    url = url or settings.webhook_url
    if not url:
        raise TelegramConfigError("give the webhook URL (--url) or set TELEGRAM_WEBHOOK_URL")
    if not url.startswith("https://") and settings.api_base is None:
        raise TelegramConfigError(f"Telegram only calls HTTPS webhooks; {url!r} is not one")
    if settings.webhook_secret is None:
        raise TelegramConfigError("TELEGRAM_WEBHOOK_SECRET is not set")
    bot = make_bot(settings)
    try:
        await bot.set_webhook(
            url,
            secret_token=settings.webhook_secret.get_secret_value(),
            allowed_updates=list(ALLOWED_UPDATES),
            drop_pending_updates=drop_pending,
        )
    finally:
        await bot.session.close()
    return url
