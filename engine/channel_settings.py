"""The chat channels' settings sections (Telegram, Threema, email, and the limits they share), part of
`engine.settings.Settings`."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings

from engine._section import section as _section
from tools.storage.media import MAX_MEDIA_BYTES


class ChannelSettings(BaseSettings):
    """Limits shared by the chat channels (Telegram, Threema, email)."""

    model_config = _section("CHANNEL_")

    messages_per_minute: int = Field(default=20, ge=1, description="Messages one sender may send per minute.")
    join_attempts_per_hour: int = Field(default=5, ge=1, description="Invite codes one unknown sender may try.")
    unknown_notice_every_s: int = Field(
        default=86400, ge=60, description="An unknown sender gets one short notice per this many seconds."
    )
    attachment_max_bytes: int = Field(
        default=20 * 1024 * 1024,
        ge=1024,
        le=MAX_MEDIA_BYTES,
        description="Largest file (photo, voice message, PDF, calendar or text file) kept from a message on any "
        "channel; a larger one is dropped and the member is told which. Telegram's Bot API serves at most 20 MB.",
    )
    hash_key: SecretStr | None = Field(
        default=None,
        min_length=32,
        description="Key of the keyed hash that stands for senders (addresses, chat ids) in Redis key names; "
        "32+ random characters, the same for every process. Unset: derived from the other secrets set here.",
    )


class EmailSettings(BaseSettings):
    """Email: a signed inbound webhook (Mailgun-style raw MIME), an optional SMTP receiver, replies via a relay."""

    model_config = _section("EMAIL_")

    address: str | None = Field(
        default=None, description="FAA's own address, e.g. faa@family.example; required for the email channel."
    )
    aliases: list[str] = Field(
        default_factory=list, description='Further addresses the SMTP receiver accepts, e.g. ["assistant@x.org"]'
    )
    domain: str | None = Field(default=None, description="Domain of our Message-IDs. Defaults to the address's.")
    webhook_signing_key: SecretStr | None = Field(
        default=None, description="Mailgun HTTP webhook signing key; set it to enable POST /v1/email/inbound/mime."
    )
    webhook_window_s: int = Field(default=900, ge=60, description="How old (or early) a signed timestamp may be.")
    smtp_port: int | None = Field(
        default=None, ge=0, le=65535, description="Run the SMTP receiver on this port with `faa up` / `faa serve`."
    )
    smtp_bind: str = Field(default="127.0.0.1", description="Address the SMTP receiver listens on.")
    smtp_max_bytes: int = Field(
        default=25 * 1024 * 1024, ge=1024, description="Largest message SMTP accepts (Mailgun's limit is 25 MB)."
    )
    webhook_max_bytes: int = Field(
        default=40 * 1024 * 1024,
        ge=1024,
        description="Largest webhook post (a 25 MB message and its form encoding); it is spooled to disk while it "
        "arrives. A larger one can never be stored and is answered 406, which ends the provider's retries.",
    )
    relay_host: str | None = Field(default=None, description="SMTP relay for replies; set it to send email.")
    relay_port: int = Field(default=587, ge=1, le=65535)
    relay_user: str | None = None
    relay_password: SecretStr | None = None
    relay_tls: Literal["starttls", "tls", "none"] = Field(
        default="starttls", description="starttls (port 587), tls (implicit, port 465) or none (local relay only)."
    )
    relay_timeout_s: float = Field(default=30.0, gt=0)

    @property
    def own_addresses(self) -> frozenset[str]:
        return frozenset(a.lower() for a in [self.address or "", *self.aliases] if a)

    @property
    def message_domain(self) -> str:
        return self.domain or (self.address or "localhost").rpartition("@")[2]

    @property
    def webhook_enabled(self) -> bool:
        return self.address is not None and self.webhook_signing_key is not None

    @property
    def smtp_enabled(self) -> bool:
        return self.address is not None and self.smtp_port is not None

    @property
    def sending_enabled(self) -> bool:
        return self.address is not None and self.relay_host is not None


class TelegramSettings(BaseSettings):
    """The Telegram channel; enabled when a bot token and a webhook secret are set."""

    model_config = _section("TELEGRAM_")

    bot_token: SecretStr | None = Field(default=None, description="The bot's token from @BotFather.")
    webhook_secret: SecretStr | None = Field(
        default=None,
        description="Sent back by Telegram as X-Telegram-Bot-Api-Secret-Token (1-256 of A-Z a-z 0-9 _ -).",
    )
    webhook_url: str | None = Field(
        default=None, description="Public HTTPS URL of the webhook, for `faa telegram set-webhook`."
    )
    webhook_path: str = Field(default="/telegram/webhook", pattern=r"^/[A-Za-z0-9/_-]*$")
    bot_username: str | None = Field(
        default=None, description="The bot's @username for mentions in groups; asked from Telegram when unset."
    )
    api_base: str | None = Field(
        default=None, description="A local Bot API server, e.g. http://127.0.0.1:8081 (default: Telegram's)."
    )
    stream_drafts: bool = Field(default=False, description="Show the reply as a streaming draft in private chats.")
    draft_interval_s: float = Field(default=1.0, gt=0, description="At most one draft update per this many seconds.")

    @field_validator("webhook_secret")
    @classmethod
    def _secret_format(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", value.get_secret_value()):
            raise ValueError("TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        return value

    @property
    def enabled(self) -> bool:
        return self.bot_token is not None and self.webhook_secret is not None


class ThreemaSettings(BaseSettings):
    """The Threema Gateway in end-to-end mode; the channel is on when the ID, secret and private key are set."""

    model_config = _section("THREEMA_")

    gateway_id: str | None = Field(
        default=None, pattern=r"^\*[0-9A-Z]{7}$", description="The Gateway ID, e.g. *FAMILY1 (eight characters)."
    )
    secret: SecretStr | None = Field(default=None, description="The Gateway ID's API secret (also signs callbacks).")
    private_key: SecretStr | None = Field(
        default=None, description="Our NaCl private key: 64 hex digits, with or without the 'private:' prefix."
    )
    base_url: str = Field(default="https://msgapi.threema.ch", description="The Gateway's API.")
    timeout_s: float = Field(default=5.0, gt=0, le=60, description="Per request to the Gateway.")
    pubkey_ttl_s: int = Field(default=86400, ge=60, description="How long a sender's public key stays cached.")

    @field_validator("private_key")
    @classmethod
    def _hex_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        raw = value.get_secret_value().strip().removeprefix("private:")
        if re.fullmatch(r"[0-9a-fA-F]{64}", raw) is None:
            raise ValueError("THREEMA_PRIVATE_KEY must be 64 hex digits (optionally prefixed with 'private:')")
        return SecretStr(raw.lower())

    @property
    def enabled(self) -> bool:
        return self.gateway_id is not None and self.secret is not None and self.private_key is not None


# The push services of the browsers families use (Chrome and Android, Firefox, Safari, Edge): a subscription's
# endpoint must be on one of them, since the worker posts to it (never to an address a page made up).
_PUSH_SERVICES = [
    "https://fcm.googleapis.com/",
    "https://updates.push.services.mozilla.com/",
    "https://web.push.apple.com/",
    "https://*.notify.windows.com/",
]


class WebPushSettings(BaseSettings):
    """Web Push to the web app's members whose pages are closed; each household's VAPID key is made with it."""

    model_config = _section("WEBPUSH_")

    enabled: bool = Field(default=True, description="Offer push notifications in the web app and send them.")
    contact: str | None = Field(
        default=None,
        pattern=r"^(mailto:[^\s@]+@[^\s@]+|https://\S+)$",
        description="Who push services may contact about our pushes (VAPID 'sub'), mailto: or https:. Unset: "
        "EMAIL_ADDRESS, else MEDIA_BASE_URL when it is https, else mailto:faa@localhost.",
    )
    services: list[str] = Field(
        default_factory=lambda: list(_PUSH_SERVICES),
        description="Push services a subscription's endpoint may be on: URL prefixes, '*.' for any subdomain.",
    )
    ttl_s: int = Field(
        default=86400,
        ge=0,
        le=28 * 86400,
        description="How long a push service keeps a push for a browser that is off.",
    )
    timeout_s: float = Field(default=10.0, gt=0, le=60, description="Per request to a push service.")
