"""What can go wrong between FAA and the channels' peers: the Telegram Bot API, the Threema Gateway, and Redis
for the live channels."""

from __future__ import annotations

from engine.errors import AttachmentError, ConfigurationError, FAAError


class TelegramConfigError(ConfigurationError):
    """A Telegram setting is missing or unusable; the message names the variable."""


class TelegramFetchError(AttachmentError):
    """A Telegram attachment could not be downloaded; transient unless retrying cannot help (too big, gone)."""


class EventStreamError(FAAError):
    """Redis did not take a message's stream event, so its follower would miss part of the stream: the run is
    retried once Redis is back, and sends the whole stream again."""

    transient = True

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ThreemaError(FAAError):
    """Root of the Threema channel's errors."""


class MalformedMessage(ThreemaError):
    """A box that does not open, bad padding, or content that does not follow Threema's formats."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class GatewayError(ThreemaError):
    """The Gateway answered with an error status, or could not be reached (`status` None). Transient when it was
    unreachable or answered 429 or 5xx; any other 4xx will not change by retrying (unknown ID, no credits, bad
    secret, too large)."""

    def __init__(self, reason: str, *, status: int | None = None, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retry_after_s = retry_after_s
        self.transient = status is None or status == 429 or not 400 <= status < 500
