"""Every channel FAA speaks, in one list. Adding a channel: write its subpackage with a `Channel` (see
`bot.channels.channel`) and add it here; the web process and the worker take every channel from this list."""

from __future__ import annotations

from bot.channels.channel import Channel
from bot.channels.email.channel import EmailChannel
from bot.channels.telegram.channel import TelegramChannel
from bot.channels.terminal.channel import TerminalChannel
from bot.channels.threema.channel import ThreemaChannel
from bot.channels.web.channel import WebChannel
from bot.channels.webpush.channel import WebPushChannel
from engine.settings import Settings

CHANNELS: tuple[Channel, ...] = (
    TelegramChannel(),
    ThreemaChannel(),
    EmailChannel(),
    WebChannel(),
    WebPushChannel(),
    TerminalChannel(),
)


def enabled_channels(settings: Settings) -> list[Channel]:
    """The channels the settings turn on, in the list's order."""
    return [channel for channel in CHANNELS if channel.enabled(settings)]
