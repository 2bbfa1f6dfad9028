"""The web API as a `Channel`: always on. Its routes are the web app's own (`bot.web.api`)."""

from __future__ import annotations

from aiohttp import web

from bot.channels.channel import Listener, Outbound
from bot.channels.live import LiveReplySender
from bot.channels.web import CHANNEL
from engine.deps import Deps
from engine.settings import Settings


class WebChannel:
    name = CHANNEL

    def enabled(self, settings: Settings) -> bool:
        return True

    def mount(self, app: web.Application, deps: Deps) -> None:
        pass  # the message endpoints are the web API itself

    def listener(self, deps: Deps) -> Listener | None:
        return None

    def outbound(self, deps: Deps) -> Outbound:
        return Outbound(LiveReplySender(deps.redis))
