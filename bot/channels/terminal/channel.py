"""The terminal chat as a `Channel`: always on. It has no routes: `faa chat` writes to the inbox itself."""

from __future__ import annotations

from aiohttp import web

from bot.channels.channel import Listener, Outbound
from bot.channels.live import LiveReplySender
from bot.channels.terminal import CHANNEL
from engine.deps import Deps
from engine.settings import Settings


class TerminalChannel:
    name = CHANNEL

    def enabled(self, settings: Settings) -> bool:
        return True

    def mount(self, app: web.Application, deps: Deps) -> None:
        pass

    def listener(self, deps: Deps) -> Listener | None:
        return None

    def outbound(self, deps: Deps) -> Outbound:
        return Outbound(LiveReplySender(deps.redis))
