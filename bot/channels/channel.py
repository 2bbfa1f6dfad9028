"""The `Channel` protocol: what every way of reaching FAA gives the web process and the worker.

A channel is one subpackage of `bot.channels` with one `Channel` object, listed in `bot.channels.registry`. The web
process mounts each enabled channel's routes and runs its listener; the worker builds its sender and fetcher.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from aiohttp import web

from engine.deps import AttachmentFetcher, Deps, ReplySender
from engine.settings import Settings


class Listener(Protocol):
    """A server of a channel's own that runs beside the web API (email's SMTP receiver)."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@dataclass(frozen=True)
class Outbound:
    """What a channel gives the worker: its reply sender, its attachment fetcher, and how to close what they
    hold (an HTTP session), called when the worker stops."""

    sender: ReplySender | None = None
    fetcher: AttachmentFetcher | None = None
    close: Callable[[], Awaitable[object]] | None = None


class Channel(Protocol):
    name: str  # as stored in inbox, outbox and identity rows

    def enabled(self, settings: Settings) -> bool:
        """Whether the settings turn this channel on; a channel that is off is neither mounted nor built."""
        ...

    def mount(self, app: web.Application, deps: Deps) -> None:
        """Add the channel's routes (its webhook) to the web API, with whatever they need for the app's life."""
        ...

    def listener(self, deps: Deps) -> Listener | None:
        """The channel's own server beside the web API, or `None`."""
        ...

    def outbound(self, deps: Deps) -> Outbound:
        """The channel's reply sender and attachment fetcher, for the worker."""
        ...
