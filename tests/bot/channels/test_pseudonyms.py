"""Senders in Redis key names: a keyed hash under CHANNEL_HASH_KEY or a key derived from the install's secrets."""

from __future__ import annotations

from pydantic import SecretStr

from bot.channels.pseudonyms import hash_key, pseudonym
from engine.channel_settings import ChannelSettings, EmailSettings, TelegramSettings
from engine.settings import DatabaseSettings, Settings

ADDRESS = "anna.miller@gmail.com"


def with_(**sections: object) -> Settings:
    return Settings().model_copy(update=sections)


def test_a_sender_has_one_stable_pseudonym_per_channel_that_shows_nothing_of_them() -> None:
    settings = with_(channel=ChannelSettings(hash_key=SecretStr("k" * 32)))
    name = pseudonym(settings, "email", ADDRESS)
    assert name == pseudonym(settings, "email", ADDRESS) and len(name) == 32
    assert "anna" not in name and "gmail" not in name
    assert name != pseudonym(settings, "telegram", ADDRESS)
    assert name != pseudonym(settings, "email", "ben@gmail.com")


def test_the_hash_key_is_the_setting_or_derived_from_the_secrets_set() -> None:
    explicit = with_(channel=ChannelSettings(hash_key=SecretStr("k" * 32)))
    assert hash_key(explicit) == b"k" * 32

    telegram = TelegramSettings(bot_token=SecretStr("123:abc"), webhook_secret=SecretStr("s3cret"))
    one = with_(channel=ChannelSettings(), telegram=telegram)
    other = with_(channel=ChannelSettings(), telegram=telegram.model_copy(update={"webhook_secret": SecretStr("x")}))
    assert hash_key(one) == hash_key(with_(channel=ChannelSettings(), telegram=telegram))  # every process agrees
    assert hash_key(one) != hash_key(other) != hash_key(explicit)
    assert b"s3cret" not in hash_key(one)

    email = EmailSettings(address="faa@family.example", webhook_signing_key=SecretStr("key-1"))
    assert hash_key(with_(channel=ChannelSettings(), email=email)) != hash_key(one)
    database = DatabaseSettings(url="postgresql://faa:pw@db/faa")
    assert hash_key(with_(channel=ChannelSettings(), database=database)) != hash_key(with_(channel=ChannelSettings()))
