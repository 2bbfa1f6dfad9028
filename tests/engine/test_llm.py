"""OpenAILLM against the fake OpenAI server, over real HTTP with the real `openai` client."""

from __future__ import annotations

import asyncio
import json
import math
import socket
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import openai
import pytest
import structlog

from engine.errors import LLMError
from engine.json_grammar import json_grammar
from engine.llm import OpenAILLM
from engine.llm_types import StreamEvent
from engine.settings import LLMSettings
from tests.fakes import ChatRequest, FakeOpenAI, Scripted, fake_embedding
from tests.network_guard import NetworkBlockedError, expect_blocked

MESSAGES = [
    {"role": "system", "content": "You are a family assistant."},
    {"role": "user", "content": "How much did we spend on groceries this week?"},
]
LONG_ANSWER = "You spent 84.20 EUR on groceries this week, across three shopping trips."


class Events:
    """An EventSink that records what it is sent."""

    def __init__(self) -> None:
        self.items: list[StreamEvent] = []

    async def __call__(self, event: StreamEvent) -> None:
        self.items.append(event)

    def of(self, event_type: str) -> list[dict[str, Any]]:
        return [event.data for event in self.items if event.type == event_type]

    def types(self) -> list[str]:
        return [event.type for event in self.items]


@pytest.fixture(scope="module")
async def fake() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI()
    await server.start()
    yield server
    await server.stop()


def make_llm(base_url: str, **overrides: Any) -> OpenAILLM:
    settings = LLMSettings(base_url=base_url, api_key=None, model="test-model", max_retries=0, timeout_s=5.0)
    return OpenAILLM.from_settings(settings.model_copy(update=overrides))


@pytest.fixture
async def llm(fake: FakeOpenAI) -> AsyncIterator[OpenAILLM]:
    fake.reset()
    client = make_llm(fake.base_url)
    yield client
    await client.close()


async def test_complete_returns_content_usage_and_model(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    fake.script(lambda req: Scripted(content=f"echo: {req.last_user_text}"))

    result = await llm.complete(MESSAGES)

    assert result.content == "echo: How much did we spend on groceries this week?"
    assert result.finish_reason == "stop"
    assert result.model == "test-model"
    assert not result.streamed
    assert result.usage.prompt_tokens >= 1 and result.usage.completion_tokens >= 1
    [request] = fake.requests
    assert request.messages == MESSAGES
    assert request.body["temperature"] == 0.2
    assert not request.stream
    assert request.body.get("response_format") is None and request.tools is None  # no native tools, ever
    assert "max_tokens" not in request.body  # the endpoint's own limit unless LLM_MAX_OUTPUT_TOKENS is set


async def test_complete_with_schema_sends_response_format(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    schema = {"type": "object", "properties": {"intent": {"type": "string"}}, "required": ["intent"]}
    fake.script(lambda req: Scripted.json({"intent": "query"}))

    result = await llm.complete(MESSAGES, response_schema=schema, schema_name="route_expense")

    assert json.loads(result.content or "") == {"intent": "query"}
    [request] = fake.requests
    assert request.schema_name == "route_expense"
    assert request.schema == schema
    assert request.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "route_expense", "schema": schema, "strict": False},
    }


async def test_complete_with_schema_in_json_object_form(fake: FakeOpenAI) -> None:
    """The form older llama.cpp servers take: JSON mode with the schema beside it (LLM_STRUCTURED_OUTPUT)."""
    schema = {"type": "object", "properties": {"intent": {"type": "string"}}, "required": ["intent"]}
    fake.reset()
    fake.script(lambda req: Scripted.json({"intent": "record"}))
    client = make_llm(fake.base_url, structured_output="json_object", max_output_tokens=600)
    try:
        result = await client.complete(MESSAGES, response_schema=schema, schema_name="route_expense")
    finally:
        await client.close()

    assert json.loads(result.content or "") == {"intent": "record"}
    assert fake.requests[0].body["response_format"] == {"type": "json_object", "schema": schema}
    assert fake.requests[0].body["max_tokens"] == 600


async def test_complete_with_schema_as_a_grammar(fake: FakeOpenAI) -> None:
    """The local default: llama.cpp's `grammar` field, made from the schema, instead of a response format."""
    schema = {"type": "object", "properties": {"intent": {"type": "string"}}, "required": ["intent"]}
    fake.reset()
    fake.script(lambda req: Scripted.json({"intent": "record"}))
    client = make_llm(fake.base_url, structured_output="grammar")
    try:
        result = await client.complete(MESSAGES, response_schema=schema, schema_name="route_expense")
        await client.stream(MESSAGES, emit=Events(), response_schema=schema, schema_name="route_expense")
        await client.complete(MESSAGES)
    finally:
        await client.close()

    assert json.loads(result.content or "") == {"intent": "record"}
    constrained, streamed, free = (request.body for request in fake.requests)
    assert constrained["grammar"] == streamed["grammar"] == json_grammar(schema)
    assert "response_format" not in constrained and "response_format" not in streamed
    assert "grammar" not in free and "response_format" not in free


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": message}]}


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("<html>502 Bad Gateway</html>", "malformed response"),  # not JSON at all, yet status 200
        ([{"choices": []}], "malformed response"),
        ({"object": "chat.completion", "choices": []}, "response without choices"),
        (_completion({"role": "assistant", "content": 42}), "malformed response"),
        ({"choices": ["hello"]}, "malformed response"),
    ],
)
async def test_an_answer_not_shaped_like_a_completion_is_a_transient_error(
    fake: FakeOpenAI, llm: OpenAILLM, answer: Any, reason: str
) -> None:
    fake.script(lambda req: Scripted(raw=answer))

    with pytest.raises(LLMError) as caught:
        await llm.complete(MESSAGES)

    assert (caught.value.reason, caught.value.transient) == (reason, True)


async def test_stream_emits_content_deltas_in_order(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    fake.script(lambda req: Scripted(content=LONG_ANSWER))
    events = Events()

    result = await llm.stream(MESSAGES, emit=events)

    deltas = [data["text"] for data in events.of("content_delta")]
    assert len(deltas) > 5
    assert "".join(deltas) == LONG_ANSWER
    assert set(events.types()) == {"content_delta"}
    assert result.content == LONG_ANSWER
    assert result.streamed and result.finish_reason == "stop"
    [request] = fake.requests
    assert request.stream and request.body["stream_options"] == {"include_usage": True}


async def test_stream_records_usage_from_the_last_chunk(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    fake.script(lambda req: Scripted(content=LONG_ANSWER))

    streamed = await llm.stream(MESSAGES, emit=Events())
    plain = await llm.complete(MESSAGES)

    assert streamed.usage == plain.usage
    assert streamed.usage.total > 0


async def test_stream_emits_thinking_before_content(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    reasoning = "The user asks about groceries; sum this week's expenses."
    fake.script(lambda req: Scripted(content="84.20 EUR", reasoning=reasoning))
    events = Events()

    result = await llm.stream(MESSAGES, emit=events)

    assert "".join(data["text"] for data in events.of("thinking")) == reasoning
    assert events.types().index("content_delta") > max(i for i, t in enumerate(events.types()) if t == "thinking")
    assert result.content == "84.20 EUR"


async def test_broken_stream_falls_back_to_a_plain_call(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    fake.script(lambda req: Scripted(content=LONG_ANSWER, break_stream=True))
    events = Events()

    result = await llm.stream(MESSAGES, emit=events)

    assert [request.stream for request in fake.requests] == [True, False]
    plain = await llm.complete(MESSAGES)
    assert result == plain
    assert not result.streamed
    types = events.types()
    error_at = types.index("error")
    assert events.items[error_at].data == {"message": "connection error", "fallback": True}
    assert "content_delta" in types[:error_at]  # partial content arrived before the break
    assert events.items[error_at + 1] == StreamEvent("content_delta", {"text": LONG_ANSWER})


async def test_stream_with_schema_sends_response_format_and_keeps_it_on_the_fallback(
    fake: FakeOpenAI, llm: OpenAILLM
) -> None:
    schema = {"type": "object", "properties": {"reply": {"type": "string"}}, "required": ["reply"]}
    answer = json.dumps({"reply": "Hello there, how can I help?"})
    fake.script(lambda req: Scripted(content=answer, break_stream=len(fake.requests) == 1))
    events = Events()

    result = await llm.stream(MESSAGES, emit=events, response_schema=schema, schema_name="route_chat")

    assert [request.stream for request in fake.requests] == [True, False]
    assert [(request.schema_name, request.schema) for request in fake.requests] == [("route_chat", schema)] * 2
    assert result.content == answer
    assert events.of("content_delta")[-1] == {"text": answer}  # the plain call's answer whole, after the error
    fake.script(lambda req: Scripted(content=answer))
    streamed = await llm.stream(MESSAGES, emit=Events(), response_schema=schema, schema_name="route_chat")
    assert streamed.streamed and streamed.content == answer
    assert fake.requests[-1].body["response_format"]["json_schema"]["name"] == "route_chat"


async def test_stream_without_finish_reason_falls_back(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    fake.script(lambda req: Scripted(content="partial", omit_finish_reason=True))
    events = Events()

    result = await llm.stream(MESSAGES, emit=events)

    assert result.content == "partial" and not result.streamed
    assert {"message": "stream ended without a finish_reason", "fallback": True} in events.of("error")


async def test_stream_refused_by_the_server_falls_back(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    # Some local servers reject stream_options or streaming altogether; the plain call still answers.
    fake.script(lambda req: Scripted(status=400) if req.stream else Scripted(content="plain answer"))
    events = Events()

    result = await llm.stream(MESSAGES, emit=events)

    assert result.content == "plain answer"
    assert events.types() == ["error", "content_delta"]
    assert events.items[0].data == {"message": "HTTP 400", "fallback": True}


async def test_stream_fails_with_llm_error_when_the_fallback_fails_too(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    fake.script(lambda req: Scripted(status=503))

    with pytest.raises(LLMError) as caught:
        await llm.stream(MESSAGES, emit=Events())

    assert caught.value.transient
    assert len(fake.requests) == 2


@pytest.mark.parametrize(
    ("status", "transient"), [(500, True), (503, True), (429, True), (400, False), (401, False), (404, False)]
)
async def test_http_errors_map_to_llm_error(fake: FakeOpenAI, llm: OpenAILLM, status: int, transient: bool) -> None:
    fake.script(lambda req: Scripted(status=status))

    with pytest.raises(LLMError) as caught:
        await llm.complete(MESSAGES)

    assert caught.value.transient is transient
    assert caught.value.reason.startswith(f"HTTP {status}")
    assert len(fake.requests) == 1  # max_retries=0: the client itself did not retry


async def test_timeout_is_a_retryable_llm_error(fake: FakeOpenAI) -> None:
    fake.reset()
    fake.script(lambda req: Scripted(content="too late", delay_s=1.0))
    llm = make_llm(fake.base_url, timeout_s=0.2)

    with pytest.raises(LLMError) as caught:
        await llm.complete(MESSAGES)
    await llm.close()

    assert caught.value.reason == "timeout" and caught.value.transient


async def test_connection_refused_is_a_retryable_llm_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    llm = make_llm(f"http://127.0.0.1:{port}/v1")

    with pytest.raises(LLMError) as caught:
        await llm.complete(MESSAGES)
    await llm.close()

    assert caught.value.reason == "connection error" and caught.value.transient


async def test_from_settings_sends_a_placeholder_key_without_one(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    fake.script(lambda req: Scripted(content="ok"))

    await llm.complete(MESSAGES)

    assert fake.requests[0].headers["authorization"] == "Bearer not-needed"


async def test_summary_is_logged_without_message_text(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    fake.script(lambda req: Scripted(content="secret answer"))

    with structlog.testing.capture_logs() as logs:
        await llm.complete(MESSAGES, response_schema={"type": "object"}, schema_name="route_expense")
        await llm.stream(MESSAGES, emit=Events())

    summaries = [entry for entry in logs if entry["event"] == "llm.response.summary"]
    assert [(s["streamed"], s["schema_name"]) for s in summaries] == [(False, "route_expense"), (True, None)]
    for summary in summaries:
        assert summary["model"] == "test-model"
        assert summary["prompt_tokens"] > 0 and summary["completion_tokens"] > 0
        assert summary["duration_ms"] >= 0
    visible = json.dumps([entry for entry in logs if entry["log_level"] != "debug"], default=str)
    assert "secret" not in visible and "groceries" not in visible


async def test_failed_stream_is_logged_as_a_warning(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    fake.script(lambda req: Scripted(content=LONG_ANSWER, break_stream=True))

    with structlog.testing.capture_logs() as logs:
        await llm.stream(MESSAGES, emit=Events())

    [failure] = [entry for entry in logs if entry["event"] == "llm.stream.failed"]
    assert failure["log_level"] == "warning" and failure["reason"] == "connection error"


async def test_fake_without_a_script_answers_500() -> None:
    server = FakeOpenAI()
    llm = make_llm(await server.start())
    try:
        with pytest.raises(LLMError) as caught:
            await llm.complete(MESSAGES)
    finally:
        await llm.close()
        await server.stop()
    assert caught.value.reason == "HTTP 500" and caught.value.transient


async def test_fake_rejects_invalid_json(fake: FakeOpenAI) -> None:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{fake.base_url}/chat/completions", data=b"{not json") as response,
    ):
        assert response.status == 400
        assert "error" in await response.json()


async def test_fake_records_requests_and_supports_async_handlers(fake: FakeOpenAI, llm: OpenAILLM) -> None:
    async def handler(req: ChatRequest) -> Scripted:
        await asyncio.sleep(0)
        return Scripted(content=str(len(req.all_text.splitlines())))

    fake.script(handler)

    result = await llm.complete(MESSAGES)

    assert result.content == "2"
    assert fake.requests[0].all_text == "You are a family assistant.\nHow much did we spend on groceries this week?"


async def test_fake_embeddings_over_the_wire(fake: FakeOpenAI) -> None:
    fake.reset()
    texts = ["passage: Milk and bread", "牛奶和面包"]
    async with openai.AsyncOpenAI(base_url=fake.base_url, api_key="test", max_retries=0) as client:
        encoded = await client.embeddings.create(model="m", input=texts)  # base64, the client's default
        floats = await client.embeddings.create(model="m", input=texts[0], encoding_format="float")

    for item, text in zip(encoded.data, texts, strict=True):
        assert item.embedding == pytest.approx(fake_embedding(text, fake.embedding_dim), abs=1e-6)
    assert floats.data[0].embedding == pytest.approx(fake_embedding(texts[0], 64))
    assert fake.embedding_requests == [texts, [texts[0]]]


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_fake_embedding_puts_similar_texts_near() -> None:
    def embed(text: str) -> list[float]:
        return fake_embedding(text, 64)

    # Each token owns one signed coordinate, so two different words can collide at 64 dimensions and
    # cancel (spend/spent do): texts that share several words are the robust way to be "similar".
    query = embed("query: how much did we spend on groceries")
    similar = embed("passage: Groceries at the market cost 40 EUR, we spend too much")
    unrelated = embed("passage: Mia has a dentist appointment on Friday")
    assert _cosine(query, similar) > _cosine(query, unrelated)
    assert _cosine(embed("牛奶面包"), embed("买了牛奶")) > _cosine(embed("牛奶面包"), embed("看牙医"))
    assert embed("Apples") == embed("apple")  # a trailing plural s is dropped
    assert embed("query: apples") == embed("passage: apples")
    assert math.isclose(_cosine(query, query), 1.0)
    assert embed("") == embed("the of and") and math.isclose(_cosine(embed(""), embed("")), 1.0)
    assert len(embed("x")) == 64 and len(fake_embedding("x", 8)) == 8


def test_network_guard_refuses_remote_connections() -> None:
    with expect_blocked() as attempts:
        with pytest.raises(NetworkBlockedError):
            socket.create_connection(("8.8.8.8", 443), timeout=5)
        with pytest.raises(NetworkBlockedError), socket.socket(socket.AF_INET6) as sock:
            sock.connect_ex(("2001:4860:4860::8888", 443, 0, 0))
    assert len(attempts) == 2


async def test_network_guard_stops_the_llm_client() -> None:
    llm = make_llm("http://8.8.8.8/v1", timeout_s=30.0)
    with expect_blocked() as attempts, pytest.raises(LLMError) as caught:
        await llm.complete(MESSAGES)
    await llm.close()
    assert attempts == ["network guard: tests may not connect to ('8.8.8.8', 80) (only loopback is allowed)"]
    assert caught.value.reason == "connection error"  # refused at once, not a 30 s timeout
    chain: BaseException | None = caught.value
    while chain is not None and not isinstance(chain, NetworkBlockedError):
        chain = chain.__cause__ or chain.__context__
    assert chain is not None, "the guard's error is not in the exception chain"


def test_network_guard_allows_loopback() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=5):
            pass
