"""The engine's errors, below the one root `FAAError` (the tool layer's are re-exported for the engine's use).

Who must act decides the class, and `transient` whether time can: `ToolRetry` goes back to the model;
`AnalysisError`, `PlanningError` and `ContextError` end at once in a polite reply, since a retry would meet the
same model and the same data; `LLMError` and `AttachmentError` are retried when they are transient;
`BudgetExceeded` stops the turn with what was done so far.
"""

from __future__ import annotations

from tools.errors import (
    EmbeddingError,
    FAAError,
    HouseholdError,
    RecurrenceError,
    StorageError,
    ToolError,
    ToolRetry,
    ToolTimeoutError,
)

__all__ = [
    "AnalysisError",
    "AttachmentError",
    "BudgetExceeded",
    "ConfigurationError",
    "ContextError",
    "DeliveryError",
    "EmbeddingError",
    "FAAError",
    "HouseholdError",
    "LLMError",
    "PlanningError",
    "PromptError",
    "RecurrenceError",
    "StorageError",
    "ToolError",
    "ToolRetry",
    "ToolTimeoutError",
]


class AnalysisError(FAAError):
    """The model's analysis stayed invalid after the repair round."""

    def __init__(self, reason: str, raw: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


class ContextError(FAAError):
    """A context request could not be served (the member is not in the household, a thread is unknown)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PlanningError(FAAError):
    """The tool plan is unusable: unknown tool, a dependency cycle, too many steps."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class LLMError(FAAError):
    """The model endpoint failed after the client's own retries. Transient when it was unreachable or slow, or
    answered 408, 429 or 5xx; a 4xx other than those means the request itself is wrong and will fail again."""

    def __init__(self, reason: str, *, transient: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient


class BudgetExceeded(FAAError):
    """A budget ran out: one message's (rounds, tool calls, tokens, seconds) or the household's tokens per day."""

    def __init__(self, budget: str, limit: float, *, household: bool = False) -> None:
        super().__init__(f"{budget} budget of {limit:g} exhausted")
        self.budget = budget
        self.limit = limit
        self.household = household


class AttachmentError(FAAError):
    """An attachment could not be downloaded or read. A transient one (a network hiccup) lets the job run again;
    otherwise, and on the last attempt, the message goes on without the attachment's text."""

    def __init__(self, reason: str, *, transient: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient


class DeliveryError(FAAError):
    """A reply could not be delivered. Transient when a later try can succeed (the channel is unreachable or asks
    to wait `retry_after_s`); otherwise retrying will not help (a blocked bot, a bad address)."""

    def __init__(self, reason: str, *, transient: bool, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient
        self.retry_after_s = retry_after_s


class PromptError(FAAError):
    """The prompts file is missing, malformed or refers to blocks it lacks."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ConfigurationError(FAAError):
    """A setting is missing or inconsistent; the message says which variable to set."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
