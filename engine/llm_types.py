"""What the engine and the LLM client exchange: requests, responses, usage and streaming events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

EventType = Literal[
    "stream_start", "thinking", "tool_use", "tool_result", "content_delta", "session_stats", "error", "stream_end"
]


@dataclass(frozen=True)
class StreamEvent:
    type: EventType
    data: dict[str, Any] = field(default_factory=dict)


EventSink = Callable[[StreamEvent], Awaitable[None]]


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class LLMResponse:
    content: str | None
    usage: Usage = Usage()
    model: str = ""
    finish_reason: str | None = None
    streamed: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LLMResponse:
        return cls(
            content=data.get("content"),
            usage=Usage(**data.get("usage", {})),
            model=data.get("model", ""),
            finish_reason=data.get("finish_reason"),
            streamed=data.get("streamed", False),
        )


Message = dict[str, Any]  # an OpenAI chat message


class LLM(Protocol):
    """Any OpenAI-compatible chat endpoint."""

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        response_schema: dict[str, Any] | None = None,
        schema_name: str = "response",
    ) -> LLMResponse:
        """One plain call. With `response_schema` the answer is constrained to that JSON schema."""
        ...

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        emit: EventSink,
        response_schema: dict[str, Any] | None = None,
        schema_name: str = "response",
    ) -> LLMResponse:
        """A streaming call that emits `thinking` and `content_delta` events as they arrive and
        returns the accumulated response; falls back to `complete` when the stream fails before finishing. With
        `response_schema` the answer is constrained to that JSON schema, and the deltas are pieces of its JSON."""
        ...
