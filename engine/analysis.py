"""The AnalysisModel: what the model understood and what it plans, validated at the LLM boundary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine.errors import AnalysisError
from tools.registry import describe_errors
from tools.storage.database import storable

ContextKind = Literal["recent_memories", "semantic_search", "direct_search", "thread_summaries"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Understanding(_Strict):
    intent: Literal["record", "query", "update", "delete", "reminder", "clarification_answer", "chat", "other"]
    summary: str = Field(max_length=500, description="One sentence: what the member wants, in English.")
    language: str = Field(default="en", max_length=10, description="Language of the member's message (ISO 639-1).")


class ContextRequest(_Strict):
    kind: ContextKind
    query: str | None = Field(default=None, max_length=500)
    filter: dict[str, Any] | None = Field(default=None, description="A filter tree as the search tool takes it.")
    limit: int = Field(default=10, ge=1, le=30)


class PlannedCall(_Strict):
    id: str = Field(max_length=20, description="Short step id, e.g. s1.")
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    depends_on: list[str] = Field(default_factory=list, max_length=10)


class Clarification(_Strict):
    question: str = Field(min_length=1, max_length=500)
    options: list[str] = Field(default_factory=list, max_length=6)


class ResponseDirectives(_Strict):
    reply: str | None = Field(
        default=None,
        max_length=4000,
        description="The final reply when it does not depend on tool results (e.g. a confirmation of a store).",
    )
    needs_tool_results: bool = Field(
        default=False, description="True when the reply must quote what the tools return (numbers, found facts)."
    )


class AnalysisModel(_Strict):
    understanding: Understanding
    context_requests: list[ContextRequest] = Field(default_factory=list, max_length=4)
    clarification: Clarification | None = None
    tool_plan: list[PlannedCall] = Field(default_factory=list, max_length=12)
    response: ResponseDirectives = Field(default_factory=ResponseDirectives)


def analysis_schema(tools: Sequence[tuple[str, dict[str, Any]]] = ()) -> dict[str, Any]:
    """The schema the model answers in. Every field is listed as required although most have defaults: a
    grammar-constrained model may otherwise stop after the first key and never write its plan or reply.

    With `tools` — (name, argument schema) pairs — each tool_plan step is one of them, its `args` held to that tool's
    schema, so an endpoint that constrains decoding to the schema (llama.cpp, vLLM) cannot emit an invalid call."""
    schema = AnalysisModel.model_json_schema()
    for part in (schema, *schema.get("$defs", {}).values()):
        if "properties" in part:
            part["required"] = list(part["properties"])
    if tools:
        step = schema["$defs"]["PlannedCall"]
        options = []
        for name, parameters in tools:
            parameters = dict(parameters)
            schema["$defs"].update(parameters.pop("$defs", {}))  # shared types (the filter tree) are identical
            properties = {**step["properties"], "tool": {"const": name}, "args": parameters}
            options.append({**step, "properties": properties})
        schema["$defs"]["PlannedCall"] = {"anyOf": options}
    return schema


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
