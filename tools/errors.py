"""The root of FAA's errors and the ones the tool layer raises.

The root lives here because `tools` is the innermost package: everything else may import it.
"""

from __future__ import annotations


class FAAError(Exception):
    """Root of every error FAA raises on purpose."""


class StorageError(FAAError):
    """The database refused or failed an operation."""


class ToolRetry(FAAError):
    """A tool call the model must fix: bad arguments or an impossible request.

    The message goes back to the model verbatim, so it is written for the model.
    """

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(f"{tool}: {message}")
        self.tool = tool
        self.message = message


class ToolError(FAAError):
    """A tool failed for a reason the model cannot fix."""

    def __init__(self, tool: str, reason: str) -> None:
        super().__init__(f"{tool} failed: {reason}")
        self.tool = tool
        self.reason = reason


class ToolTimeoutError(ToolError):
    def __init__(self, tool: str, seconds: float) -> None:
        super().__init__(tool, f"timed out after {seconds:g} s")
        self.seconds = seconds


class EmbeddingError(FAAError):
    """The embedding endpoint failed or answered with vectors of the wrong size."""


def root_cause(exc: BaseException) -> BaseException:
    """The first error of an explicit chain (`raise ... from`), which says more than the wrappers around it: the
    `openai` client on aiohttp reports a refused connection as a connect timeout caused by ConnectionRefusedError."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc
