"""Threema as a `Channel`: on when THREEMA_GATEWAY_ID, THREEMA_SECRET and THREEMA_PRIVATE_KEY are set."""

from __future__ import annotations

from aiohttp import web

from bot.channels.channel import Listener, Outbound
from bot.channels.media import media_loader
from bot.channels.threema import CHANNEL, callback
from bot.channels.threema.fetcher import ThreemaFetcher
from bot.channels.threema.gateway import GatewayClient
from bot.channels.threema.sender import ThreemaSender
from engine.deps import Deps
from engine.settings import Settings


class ThreemaChannel:
    name = CHANNEL

    def enabled(self, settings: Settings) -> bool:
        return settings.threema.enabled

    def mount(self, app: web.Application, deps: Deps) -> None:
        callback.install(app, deps)

    def listener(self, deps: Deps) -> Listener | None:
        return None

    def outbound(self, deps: Deps) -> Outbound:
        client = GatewayClient(deps.settings.threema, deps.redis)
        return Outbound(ThreemaSender(client, media_loader(deps.db)), ThreemaFetcher(client), client.close)
