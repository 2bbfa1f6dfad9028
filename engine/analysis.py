"""The model's answers, read at the LLM boundary like a webhook body, and the tool calls the engine plans from them."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine.errors import AnalysisError
from tools.registry import describe_errors
from tools.storage.database import storable


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlannedCall(_Strict):
    id: str = Field(max_length=20, description="Short step id, e.g. s1.")
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    depends_on: list[str] = Field(default_factory=list, max_length=10)


Answer = TypeVar("Answer", bound=BaseModel)


def read_answer(model: type[Answer], raw: str | None, context: dict[str, Any] | None = None) -> Answer:
    """A model's JSON answer as `model`, read like a webhook body: bounded, with text PostgreSQL cannot hold (NUL, a
    lone surrogate escape) made storable before validation; AnalysisError says what was wrong."""
    text = raw or ""
    if len(text) > _MAX_ANSWER:
        raise AnalysisError(f"the answer is longer than {_MAX_ANSWER} characters", raw=text[:2000])
    try:
        data = storable(json.loads(text))
    except (json.JSONDecodeError, RecursionError):
        raise AnalysisError("not valid JSON", raw=text[:2000]) from None
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise AnalysisError(describe_errors(exc), raw=text[:2000]) from exc


_MAX_ANSWER = 64_000
