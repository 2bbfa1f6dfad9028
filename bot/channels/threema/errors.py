"""What can go wrong between FAA and the Threema Gateway."""

from __future__ import annotations

from tools.errors import FAAError


class ThreemaError(FAAError):
    """Root of the Threema channel's errors."""


class MalformedMessage(ThreemaError):
    """A box that does not open, bad padding, or content that does not follow Threema's formats."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class GatewayError(ThreemaError):
    """The Gateway answered with an error status, or could not be reached (`status` None)."""

    def __init__(self, reason: str, *, status: int | None = None, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retry_after_s = retry_after_s

    @property
    def permanent(self) -> bool:
        """A 4xx other than 429 will not change by retrying: unknown ID, no credits, bad secret, too large."""
        return self.status is not None and 400 <= self.status < 500 and self.status != 429
