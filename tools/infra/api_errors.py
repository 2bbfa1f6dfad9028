"""What a failure of an OpenAI-compatible service (chat, embeddings, speech) means for a retry."""

from __future__ import annotations

import openai


def is_transient(exc: openai.OpenAIError) -> bool:
    """Whether a later try can succeed: the service was unreachable or slow, broke off a stream, or answered 408
    (its own timeout), 429 (overloaded) or 5xx. Any other 4xx means the request itself is wrong and will fail again.
    """
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 429) or exc.status_code >= 500
    # Connection failures and timeouts (APIConnectionError), error events inside a stream, and answers that do not
    # parse (APIResponseValidationError) are all APIErrors; an OpenAIError that is none of them is a setup problem.
    return isinstance(exc, openai.APIError)
