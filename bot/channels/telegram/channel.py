"""Telegram as a `Channel`: on when TELEGRAM_BOT_TOKEN and TELEGRAM_WEBHOOK_SECRET are set."""

from __future__ import annotations

from aiohttp import web

from bot.channels.channel import Listener, Outbound
from bot.channels.media import media_loader
from bot.channels.telegram import CHANNEL
from bot.channels.telegram.client import make_bot
from bot.channels.telegram.fetcher import TelegramFetcher
from bot.channels.telegram.sender import TelegramSender
from bot.channels.telegram.webhook import add_webhook
from engine.deps import Deps
from engine.settings import Settings


class TelegramChannel:
    name = CHANNEL

    def enabled(self, settings: Settings) -> bool:
        return settings.telegram.enabled

    def mount(self, app: web.Application, deps: Deps) -> None:
        add_webhook(app, deps)

    def listener(self, deps: Deps) -> Listener | None:
        return None

    def outbound(self, deps: Deps) -> Outbound:
        bot = make_bot(deps.settings.telegram)
        sender = TelegramSender(bot, media_loader(deps.db), deps.settings.telegram)
        return Outbound(sender, TelegramFetcher(bot), bot.session.close)
