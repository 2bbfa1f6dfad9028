"""The engine's errors, below the one root `FAAError`.

Who must act decides the class: `ToolRetry` goes back to the model; `AnalysisError` and `LLMError` end in a
friendly reply and a retryable message; `BudgetExceeded` stops the turn with what was done so far.
"""

from __future__ import annotations

from tools.errors import EmbeddingError, FAAError, StorageError, ToolError, ToolRetry, ToolTimeoutError

__all__ = [
    "AnalysisError",
    "AttachmentError",
    "BudgetExceeded",
    "ContextError",
    "EmbeddingError",
    "FAAError",
    "LLMError",
    "PlanningError",
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
    """A context request could not be served."""


class PlanningError(FAAError):
    """The tool plan is unusable: unknown tool, a dependency cycle, too many steps."""


class LLMError(FAAError):
    """The model endpoint failed (network, status, timeout) after the client's own retries."""

    def __init__(self, reason: str, *, retryable: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


class BudgetExceeded(FAAError):
    """A budget ran out: one message's (rounds, tool calls, tokens, seconds) or the household's tokens per day."""

    def __init__(self, budget: str, limit: float, *, household: bool = False) -> None:
        super().__init__(f"{budget} budget of {limit:g} exhausted")
        self.budget = budget
        self.limit = limit
        self.household = household


class AttachmentError(FAAError):
    """An attachment could not be downloaded or read. `retryable` (a network hiccup) lets the job run again;
    otherwise, and on the last attempt, the message goes on without the attachment's text."""

    def __init__(self, reason: str, *, retryable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
