"""The root of FAA's errors and the ones the tool layer raises (tools, storage, embeddings, recurrences).

The root lives here because `tools` is the innermost package: everything else may import it. Each layer keeps its
own in one module: `engine.errors`, `bot.channels.errors`, `bot.web.errors`, `bot.ops.errors`.
"""

from __future__ import annotations

from typing import Literal


class FAAError(Exception):
    """Root of every error FAA raises on purpose.

    `transient` says whether time can fix it (a peer that is down or slow, a dropped connection): only a transient
    error is retried. Any other is answered at once by whoever must act on it: the model (`ToolRetry`), the member
    (a polite reply), the operator (a log line). A class that is always one or the other says so here; one whose
    instances differ takes `transient` as an argument.
    """

    transient: bool = False


class StorageError(FAAError):
    """The database failed an operation or refused one. Transient when time can fix it: the connection was lost,
    a statement timed out or was cancelled, the server is restarting or has no connection to spare."""

    def __init__(self, reason: str, *, transient: bool = False, sqlstate: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient
        self.sqlstate = sqlstate


Problem = Literal["invalid", "not_found", "not_allowed"]


class ToolRetry(FAAError):
    """A tool call the model must fix: bad arguments or an impossible request.

    `message` goes back to the model verbatim, so it is written for the model (which tool to call, where ids come
    from) and never shown to a member. A member reads `for_member` when the tool wrote one (a plain sentence about
    what they asked, e.g. "That time is in the past."), else a text of their page or channel for `problem`.
    """

    problem: Problem = "invalid"

    def __init__(self, tool: str, message: str, *, for_member: str | None = None) -> None:
        super().__init__(f"{tool}: {message}")
        self.tool = tool
        self.message = message
        self.for_member = for_member


class RowNotFound(ToolRetry):
    """The row a call names does not exist, or the asking member may not see it (the two look the same)."""

    problem: Problem = "not_found"


class NotPermitted(ToolRetry):
    """The asking member's role (or authorship) does not allow this change (`tools.permissions`). `rule` names the
    rule that refused it: "child", "author", "adult" or "owner"."""

    problem: Problem = "not_allowed"

    def __init__(self, tool: str, message: str, *, rule: str, for_member: str | None = None) -> None:
        super().__init__(tool, message, for_member=for_member)
        self.rule = rule


class ToolError(FAAError):
    """A tool failed for a reason neither the model nor time can fix (a bug, data the database refuses); the
    reply says what could not be done."""

    def __init__(self, tool: str, reason: str) -> None:
        super().__init__(f"{tool} failed: {reason}")
        self.tool = tool
        self.reason = reason


class ToolTimeoutError(ToolError):
    """A tool outlived its time limit. A tool's own work is bounded (validated arguments, CPU work off the event
    loop), so the time went waiting on a peer — the database or the embedding endpoint — and a later try can pass."""

    transient = True

    def __init__(self, tool: str, seconds: float) -> None:
        super().__init__(tool, f"timed out after {seconds:g} s")
        self.seconds = seconds


class EmbeddingError(FAAError):
    """The embedding endpoint failed or answered with vectors of the wrong size. Transient when the endpoint was
    unreachable, slow, overloaded (429) or failing (5xx)."""

    def __init__(self, reason: str, *, transient: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient


class HouseholdError(FAAError):
    """A household or member setting that cannot be used (a name, a timezone, a role); the message says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RecurrenceError(FAAError):
    """An RRULE that cannot be used; the message says why, for the model."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def root_cause(exc: BaseException) -> BaseException:
    """The first error of an explicit chain (`raise ... from`), which says more than the wrappers around it: the
    `openai` client on aiohttp reports a refused connection as a connect timeout caused by ConnectionRefusedError."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc
