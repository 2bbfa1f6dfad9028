"""The errors of the process operations: the command line, the supervisor, the local model servers, re-embedding."""

from __future__ import annotations

from tools.errors import FAAError


class LocalModelError(FAAError):
    """The local model or its runtime could not be prepared or started; the message says what failed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ReembedError(FAAError):
    """`faa reembed` cannot run as configured; the message says what to change."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
