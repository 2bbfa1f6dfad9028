"""One list of channels: every channel subpackage is in it once, under its own name, and is on when its settings
say so."""

from __future__ import annotations

import importlib
import pkgutil

import bot.channels
from bot.channels.registry import CHANNELS, enabled_channels
from engine.channel_settings import EmailSettings, TelegramSettings, WebPushSettings
from engine.settings import Settings


def test_every_channel_subpackage_is_listed_once_under_its_own_name() -> None:
    subpackages = [info.name for info in pkgutil.iter_modules(bot.channels.__path__) if info.ispkg]
    names = {name: importlib.import_module(f"bot.channels.{name}").CHANNEL for name in subpackages}

    assert sorted(channel.name for channel in CHANNELS) == sorted(names.values())
    assert set(names) == {"email", "telegram", "terminal", "threema", "web", "webpush"}


def test_a_chat_channel_is_on_only_when_its_settings_are_set(settings: Settings) -> None:
    assert [channel.name for channel in enabled_channels(settings)] == ["web", "webpush", "terminal"]
    push_off = settings.model_copy(update={"webpush": WebPushSettings(enabled=False)})
    assert [channel.name for channel in enabled_channels(push_off)] == ["web", "terminal"]

    configured = settings.model_copy(
        update={
            "telegram": TelegramSettings(bot_token="1:x", webhook_secret="s"),
            "email": EmailSettings(address="faa@family.example"),
        }
    )
    assert [channel.name for channel in enabled_channels(configured)] == [
        "telegram", "email", "web", "webpush", "terminal",
    ]  # fmt: skip
