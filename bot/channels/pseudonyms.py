"""Stand-ins for senders in Redis key names: an email address or a chat id must not be readable from a key list.

A key carries HMAC-SHA256(hash key, channel + sender) instead of the sender, so one sender still has one key
but the name reveals nobody, and without the hash key nobody can test a guessed address against it. The hash key
is CHANNEL_HASH_KEY or, unset, derived from every secret the install has (the same in all its processes, as they
read one configuration); changing those secrets only restarts the rate-limit and notice windows.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator

from pydantic import SecretStr

from engine.settings import Settings

_DERIVATION = b"faa/channel/hash-key/v1"


def pseudonym(settings: Settings, channel: str, sender: str) -> str:
    """32 hex digits that stand for this sender on this channel."""
    digest = hmac.new(hash_key(settings), f"{channel}\x00{sender}".encode(), hashlib.sha256).hexdigest()
    return digest[:32]


def hash_key(settings: Settings) -> bytes:
    """CHANNEL_HASH_KEY, or a key derived from the secrets this install has set."""
    if settings.channel.hash_key is not None:
        return settings.channel.hash_key.get_secret_value().encode()
    material = "\x00".join(sorted(_secrets(settings))).encode()
    return hmac.new(_DERIVATION, material, hashlib.sha256).digest()


def _secrets(settings: Settings) -> Iterator[str]:
    for section_name, section in settings:
        for name, value in section:
            if isinstance(value, SecretStr):
                yield f"{section_name}.{name}={value.get_secret_value()}"
    for url in (settings.database.url, settings.database.admin_url):
        if url:  # a DSN carries the database password
            yield f"database={url}"
