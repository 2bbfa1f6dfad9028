"""Web Push as a `Channel`: on unless WEBPUSH_ENABLED is false. It has no route of its own (members turn push on
in the web app, `bot.web.pages.push`); the worker gets its sender."""

from __future__ import annotations

from aiohttp import web

from bot.channels.channel import Listener, Outbound
from bot.channels.webpush import CHANNEL
from bot.channels.webpush.sender import WebPushSender
from engine.deps import Deps
from engine.settings import Settings


class WebPushChannel:
    name = CHANNEL

    def enabled(self, settings: Settings) -> bool:
        return settings.webpush.enabled

    def mount(self, app: web.Application, deps: Deps) -> None:
        pass  # subscriptions are the web app's pages

    def listener(self, deps: Deps) -> Listener | None:
        return None

    def outbound(self, deps: Deps) -> Outbound:
        sender = WebPushSender(deps)
        return Outbound(sender, close=sender.close)
