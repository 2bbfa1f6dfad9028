"""The LLM client: any OpenAI-compatible chat endpoint through the official `openai` client.

A broken stream falls back to one plain call, since a late reply beats none; every failure leaves as `LLMError`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import openai
import structlog
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessage,
)
from openai.types.chat.chat_completion import Choice
from openai.types.chat.chat_completion_chunk import ChoiceDelta
from pydantic import SecretStr

from engine.errors import FAAError, LLMError
from engine.json_grammar import json_grammar
from engine.llm_types import EventSink, LLMResponse, Message, StreamEvent, Usage
from engine.settings import LLMSettings
from tools.errors import root_cause
from tools.infra.api_errors import is_transient

__all__ = ["OpenAILLM", "openai_client"]

log = structlog.get_logger()

# Local OpenAI-compatible servers ignore the key, but the client refuses to start without one.
_PLACEHOLDER_KEY = "not-needed"
# Errors that mean "this stream is unusable": HTTP and connection failures, and malformed chunks
# (json.JSONDecodeError and pydantic's ValidationError are both ValueErrors).
_STREAM_ERRORS = (openai.OpenAIError, ValueError)


def openai_client(
    base_url: str | None, api_key: SecretStr | None, *, timeout_s: float, max_retries: int
) -> openai.AsyncOpenAI:
    """A client for one OpenAI-compatible service (chat, embeddings, speech); without a key a placeholder is sent,
    without a base URL the SDK's own default (OPENAI_BASE_URL, else OpenAI's API).

    It runs on aiohttp, the SDK's own alternative transport (`openai.DefaultAioHttpClient`), instead of httpx with
    its pure-Python HTTP/1.1: in `bench/engine_overhead.py`'s process (web API, worker and scripted model in one)
    that saved 2.2 ms of CPU per message, 16.5 → 14.3 ms, in alternating runs.
    """
    return openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key.get_secret_value() if api_key else _PLACEHOLDER_KEY,
        timeout=timeout_s,
        max_retries=max_retries,
        http_client=openai.DefaultAioHttpClient(timeout=timeout_s),
    )


class OpenAILLM:
    """An `LLM` over `openai.AsyncOpenAI`; works with OpenAI and any server that speaks its chat API."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        model: str,
        *,
        temperature: float = 0.2,
        structured_output: Literal["json_schema", "json_object", "grammar"] = "json_schema",
        max_output_tokens: int | None = None,
    ) -> None:
        self._client = client
        self._model = model
        self._temperature = temperature
        self._structured_output = structured_output
        # A cap also stops a grammar-constrained answer that pads JSON with whitespace until the context is full.
        self._max_tokens: Any = max_output_tokens if max_output_tokens is not None else openai.omit

    @classmethod
    def from_settings(cls, settings: LLMSettings) -> OpenAILLM:
        """Build a client from the `LLM_` settings; without an API key a placeholder is sent."""
        return cls(
            openai_client(
                settings.base_url, settings.api_key, timeout_s=settings.timeout_s, max_retries=settings.max_retries
            ),
            settings.model,
            temperature=settings.temperature,
            structured_output=settings.structured_output,
            max_output_tokens=settings.max_output_tokens,
        )

    async def close(self) -> None:
        """Release the HTTP connections."""
        await self._client.close()

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        response_schema: dict[str, Any] | None = None,
        schema_name: str = "response",
    ) -> LLMResponse:
        """One plain call. With `response_schema` the answer is constrained to that JSON schema."""
        started = time.perf_counter()
        try:
            completion = await self._client.chat.completions.create(
                model=self._model,
                messages=cast(Any, list(messages)),
                temperature=self._temperature,
                max_tokens=self._max_tokens,
                **self._constraint(response_schema, schema_name),
            )
        except openai.OpenAIError as exc:
            raise _llm_error(exc) from exc
        result = _from_completion(completion)
        self._log_summary(result, started, schema_name if response_schema is not None else None)
        return result

    def _constraint(self, schema: dict[str, Any] | None, name: str) -> dict[str, Any]:
        """The request's arguments that constrain the answer to `schema` (none without one)."""
        if schema is None:
            return {}
        if self._structured_output == "grammar":
            # llama.cpp's own field; its grammar keeps the JSON on one line (see engine.json_grammar).
            return {"extra_body": {"grammar": json_grammar(schema)}}
        if self._structured_output == "json_object":
            # The older llama.cpp / llama-cpp-python form: JSON mode, constrained by the schema given beside it.
            return {"response_format": {"type": "json_object", "schema": schema}}
        # strict=False: strict mode rejects common schemas (optional fields, open objects), and the
        # caller validates the answer with Pydantic anyway.
        return {
            "response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}
        }

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
        `response_schema` the answer is constrained to that JSON schema, and the deltas are pieces of its JSON.

        On a fallback an `error` event with `fallback: True` tells the listener to discard what it got so
        far; the plain call's content then follows as one `content_delta`.
        """
        started = time.perf_counter()
        state = _StreamState()
        constraint = self._constraint(response_schema, schema_name)
        try:
            async with aclosing(self._chunks(messages, constraint)) as chunks:
                async for chunk in chunks:
                    await state.feed(chunk, emit)
            if state.finish_reason is None:
                raise _StreamFailed("stream ended without a finish_reason")
        except _StreamFailed as failure:
            return await self._fall_back(messages, emit, str(failure), response_schema, schema_name)
        result = state.result(self._model)
        self._log_summary(result, started, schema_name if response_schema is not None else None)
        return result

    async def _chunks(
        self,
        messages: Sequence[Message],
        constraint: dict[str, Any],
    ) -> AsyncGenerator[ChatCompletionChunk, None]:
        # Only the request and the iteration are guarded here; the listener's own errors must propagate.
        try:
            stream = await self._client.chat.completions.create(
                model=self._model,
                messages=cast(Any, list(messages)),
                temperature=self._temperature,
                max_tokens=self._max_tokens,
                **constraint,
                stream=True,
                stream_options={"include_usage": True},
            )
            async with stream:
                async for chunk in stream:
                    yield chunk
                    # Chunks that arrived together are parsed without a pause otherwise: 100 µs each, so a long
                    # reply read at once held the event loop for tens of milliseconds.
                    await asyncio.sleep(0)
        except _STREAM_ERRORS as exc:
            raise _StreamFailed(_llm_error(exc).reason) from exc

    async def _fall_back(
        self,
        messages: Sequence[Message],
        emit: EventSink,
        reason: str,
        response_schema: dict[str, Any] | None,
        schema_name: str,
    ) -> LLMResponse:
        log.warning("llm.stream.failed", model=self._model, reason=reason)
        await emit(StreamEvent("error", {"message": reason, "fallback": True}))
        result = await self.complete(messages, response_schema=response_schema, schema_name=schema_name)
        if result.content:
            await emit(StreamEvent("content_delta", {"text": result.content}))
        return result

    def _log_summary(self, result: LLMResponse, started: float, schema_name: str | None) -> None:
        log.info(
            "llm.response.summary",
            model=result.model or self._model,
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
            prompt_tokens=result.usage.prompt_tokens,
            completion_tokens=result.usage.completion_tokens,
            streamed=result.streamed,
            schema_name=schema_name,
        )


class _StreamFailed(FAAError):
    """The stream broke or ended unfinished; the argument is the short reason. Caught here: the plain call is
    tried at once."""

    transient = True


@dataclass
class _StreamState:
    """What a stream has delivered so far."""

    content: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None

    async def feed(self, chunk: ChatCompletionChunk, emit: EventSink) -> None:
        self.model = chunk.model or self.model
        if chunk.usage is not None:  # the last chunk, with empty choices, when include_usage is set
            self.usage = _usage(chunk.usage)
        for choice in chunk.choices:
            if choice.index != 0:  # we never ask for n > 1
                continue
            thinking = _reasoning_text(choice.delta)
            if thinking:
                await emit(StreamEvent("thinking", {"text": thinking}))
            if choice.delta.content:
                self.content.append(choice.delta.content)
                await emit(StreamEvent("content_delta", {"text": choice.delta.content}))
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason

    def result(self, default_model: str) -> LLMResponse:
        return LLMResponse(
            content="".join(self.content) or None,
            usage=self.usage,
            model=self.model or default_model,
            finish_reason=self.finish_reason,
            streamed=True,
        )


def _reasoning_text(delta: ChoiceDelta) -> str | None:
    # Not part of OpenAI's schema: DeepSeek, vLLM and llama.cpp send `reasoning_content`, others `reasoning`.
    extra = delta.model_extra or {}
    for key in ("reasoning_content", "reasoning"):
        value = extra.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _from_completion(completion: object) -> LLMResponse:
    """The first choice of the SDK's `ChatCompletion`. The SDK builds it from the server's JSON without validating
    it (and hands back the text of an answer that is not JSON), so anything not shaped like a completion is a
    malformed response here."""
    if not isinstance(completion, ChatCompletion) or not isinstance(completion.choices, list):
        raise LLMError("malformed response", transient=True)
    if not completion.choices:
        raise LLMError("response without choices", transient=True)
    choice = completion.choices[0]
    message = choice.message if isinstance(choice, Choice) else None
    if not isinstance(message, ChatCompletionMessage) or not isinstance(message.content, str | None):
        raise LLMError("malformed response", transient=True)
    return LLMResponse(
        message.content,
        _usage(completion.usage),
        completion.model if isinstance(completion.model, str) else "",
        choice.finish_reason if isinstance(choice.finish_reason, str) else None,
    )


def _tokens(count: object) -> int:
    return count if isinstance(count, int) else 0


def _usage(usage: object) -> Usage:
    if not isinstance(usage, CompletionUsage):
        return Usage()
    return Usage(_tokens(usage.prompt_tokens), _tokens(usage.completion_tokens))


def _llm_error(exc: Exception) -> LLMError:
    """Map a client error to `LLMError`. The reason stays short and free of message text: it gets logged."""
    log.debug("llm.error.detail", error_type=type(exc).__name__, detail=str(exc))
    # On aiohttp a refused connection arrives as a connect timeout; the socket's own error tells them apart.
    cause = root_cause(exc)
    refused = isinstance(cause, OSError) and not isinstance(cause, TimeoutError)
    if isinstance(exc, openai.APITimeoutError) and not refused:  # before APIConnectionError, its base class
        return LLMError("timeout", transient=True)
    if isinstance(exc, openai.APIConnectionError):
        return LLMError("connection error", transient=True)
    if isinstance(exc, openai.APIStatusError):
        code = f" ({exc.code})" if exc.code else ""
        return LLMError(f"HTTP {exc.status_code}{code}", transient=is_transient(exc))
    if isinstance(exc, openai.APIError):  # an error event inside a stream
        return LLMError("error event from the server", transient=True)
    if isinstance(exc, ValueError):
        return LLMError("malformed response", transient=True)
    return LLMError(type(exc).__name__, transient=False)
