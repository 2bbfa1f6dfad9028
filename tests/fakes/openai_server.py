"""A scripted OpenAI-compatible HTTP server for tests and benchmarks.

It speaks the real wire protocol (JSON and server-sent events over aiohttp), so the real `openai` client is
exercised end to end: streaming chunk boundaries, usage chunks, error bodies and dropped connections. A test
scripts the answer with a handler that sees each request:

    fake = FakeOpenAI()
    base_url = await fake.start()
    fake.script(lambda req: Scripted(content="hello"))
"""

from __future__ import annotations

import array
import asyncio
import base64
import hashlib
import inspect
import itertools
import json
import math
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

__all__ = ["ChatRequest", "FakeOpenAI", "Handler", "Scripted", "fake_embedding"]


@dataclass
class ChatRequest:
    """One `/v1/chat/completions` request as the fake received it."""

    body: dict[str, Any]
    messages: list[dict[str, Any]]
    stream: bool
    schema_name: str | None
    schema: dict[str, Any] | None
    tools: list[dict[str, Any]] | None
    headers: dict[str, str] = field(default_factory=dict)  # names lower-cased

    @property
    def last_user_text(self) -> str:
        """The content of the last message with role "user" ("" if there is none)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _message_text(message)
        return ""

    @property
    def all_text(self) -> str:
        """Every message's content joined with newlines."""
        return "\n".join(_message_text(message) for message in self.messages)

    @classmethod
    def from_body(cls, body: dict[str, Any], headers: dict[str, str] | None = None) -> ChatRequest:
        response_format = body.get("response_format")
        json_schema = response_format.get("json_schema") if isinstance(response_format, dict) else None
        json_schema = json_schema if isinstance(json_schema, dict) else {}
        return cls(
            body=body,
            messages=list(body.get("messages") or []),
            stream=bool(body.get("stream")),
            schema_name=json_schema.get("name"),
            schema=json_schema.get("schema"),
            tools=body.get("tools"),
            headers=dict(headers or {}),
        )


@dataclass
class Scripted:
    """What the fake answers to one chat request."""

    content: str | None = None
    status: int = 200  # non-200: an OpenAI-style error body with this status, `content` as its message
    break_stream: bool = False  # streaming only; a plain request gets the whole answer
    reasoning: str | None = None  # reasoning_content deltas before the content (and on a plain message)
    delay_s: float = 0.0
    chunk_delay_s: float = 0.0  # streaming: the pause before each chunk, as a model writing token by token
    omit_finish_reason: bool = False  # streaming: end cleanly with [DONE] but never send a finish_reason
    raw: Any = None  # plain requests: answer this verbatim (JSON, or text if a str), as a server off the API would

    @classmethod
    def json(cls, obj: Any) -> Scripted:
        """Answer with `obj` serialised as the message content (what a JSON-schema call returns)."""
        return cls(content=json.dumps(obj))


Handler = Callable[[ChatRequest], Scripted | Awaitable[Scripted]]


def _no_script(request: ChatRequest) -> Scripted:
    return Scripted(content="FakeOpenAI: no script is set; call fake.script(handler) in the test", status=500)


class FakeOpenAI:
    """An OpenAI-compatible server on 127.0.0.1 that answers chat requests with a scripted handler."""

    def __init__(self, *, embedding_dim: int = 64) -> None:
        self.embedding_dim = embedding_dim
        self.base_url = ""
        self.requests: list[ChatRequest] = []
        self.embedding_requests: list[list[str]] = []
        self.transcripts: dict[bytes, str] = {}  # audio bytes → what /audio/transcriptions answers
        self.transcription_requests: list[tuple[str, bytes]] = []  # (model, audio)
        self.embedding_bodies: list[dict[str, Any]] = []
        self.embedding_answer: Any = None  # when set, /embeddings answers this verbatim (see `Scripted.raw`)
        self.embedding_failures_after: int | None = None  # when set, /embeddings answers 503 once it served this many
        self._handler: Handler = _no_script
        self._runner: web.AppRunner | None = None
        self._ids = itertools.count(1)

    async def start(self) -> str:
        """Bind to a free loopback port and return the base URL, e.g. "http://127.0.0.1:PORT/v1"."""
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_post("/v1/audio/transcriptions", self._transcription)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.base_url = f"http://{host}:{port}/v1"
        return self.base_url

    async def stop(self) -> None:
        """Close the server and every open connection."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def script(self, handler: Handler) -> None:
        """Let `handler` answer every chat request from now on."""
        self._handler = handler

    def reset(self) -> None:
        """Forget the logged requests (the handler stays)."""
        self.requests.clear()
        self.embedding_requests.clear()
        self.transcripts.clear()
        self.transcription_requests.clear()
        self.embedding_bodies.clear()

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await _json_body(request)
        if body is None or not isinstance(body.get("messages"), list):
            return _error(400, "request body must be JSON with a messages list")
        chat = ChatRequest.from_body(body, {name.lower(): value for name, value in request.headers.items()})
        self.requests.append(chat)
        answer = self._handler(chat)
        scripted = await answer if inspect.isawaitable(answer) else answer
        if scripted.delay_s:
            await asyncio.sleep(scripted.delay_s)
        if scripted.status != 200:
            return _error(scripted.status, scripted.content or f"scripted error {scripted.status}")
        if scripted.raw is not None and not chat.stream:
            return _verbatim(scripted.raw)
        completion_id = f"chatcmpl-{next(self._ids)}"
        if chat.stream:
            return await self._stream(request, chat, scripted, completion_id)
        return web.json_response(_completion(chat, scripted, completion_id))

    async def _stream(
        self, request: web.Request, chat: ChatRequest, scripted: Scripted, completion_id: str
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        chunks = _stream_chunks(chat, scripted, completion_id)
        if scripted.break_stream:
            # Everything before the finishing chunk, cut about halfway: a model that died mid-answer.
            cut = max(1, min(len(chunks) - 1, len(chunks) // 2))
            for chunk in chunks[:cut]:
                await response.write(_sse(chunk))
            assert request.transport is not None
            request.transport.close()  # no terminating chunk: the client sees an incomplete body
            return response
        for chunk in chunks:
            if scripted.chunk_delay_s:
                await asyncio.sleep(scripted.chunk_delay_s)
            await response.write(_sse(chunk))
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        body = await _json_body(request)
        if body is None or "input" not in body:
            return _error(400, "request body must be JSON with an input")
        if self.embedding_failures_after is not None and len(self.embedding_requests) >= self.embedding_failures_after:
            return _error(503, "FakeOpenAI: embeddings are down")
        raw = body["input"]
        texts = [raw] if isinstance(raw, str) else [item if isinstance(item, str) else str(item) for item in raw]
        self.embedding_requests.append(texts)
        self.embedding_bodies.append(body)
        if self.embedding_answer is not None:
            return _verbatim(self.embedding_answer)
        # Like OpenAI's text-embedding-3 models: `dimensions` asks for shorter vectors.
        dim = body["dimensions"] if isinstance(body.get("dimensions"), int) else self.embedding_dim
        data = []
        for index, text in enumerate(texts):
            vector = fake_embedding(text, dim)
            encoded: list[float] | str = vector
            if body.get("encoding_format") == "base64":
                # The openai client asks for base64 by default: little-endian float32, like the real API.
                encoded = base64.b64encode(array.array("f", vector).tobytes()).decode()
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = max(1, sum(len(text) for text in texts) // 4)
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "fake-embedding"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    async def _transcription(self, request: web.Request) -> web.StreamResponse:
        """Multipart `file` + `model`, as the openai client sends it; the scripted transcript for those bytes."""
        form = await request.post()
        upload, model = form.get("file"), form.get("model")
        if not isinstance(upload, web.FileField) or not isinstance(model, str):
            return _error(400, "multipart body needs a file and a model")
        audio = upload.file.read()
        self.transcription_requests.append((model, audio))
        if audio not in self.transcripts:
            return _error(400, "FakeOpenAI: no transcript scripted for this audio")
        return web.json_response({"text": self.transcripts[audio]})


def _verbatim(answer: Any) -> web.Response:
    return web.Response(text=answer) if isinstance(answer, str) else web.json_response(answer)


async def _json_body(request: web.Request) -> dict[str, Any] | None:
    try:
        body = json.loads(await request.read())
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _error(status: int, message: str) -> web.Response:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return web.json_response({"error": {"message": message, "type": kind, "param": None, "code": None}}, status=status)


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _usage(chat: ChatRequest, scripted: Scripted) -> dict[str, int]:
    prompt = max(1, len(chat.all_text) // 4)
    completion = max(1, len(scripted.content or "") // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _completion(chat: ChatRequest, scripted: Scripted, completion_id: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": scripted.content, "refusal": None}
    if scripted.reasoning is not None:
        message["reasoning_content"] = scripted.reasoning
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": chat.body.get("model", "fake-model"),
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
        "usage": _usage(chat, scripted),
    }


_PIECE_SIZES = (3, 5, 8, 4, 7, 6)


def _pieces(text: str) -> list[str]:
    """Split text into small chunks of 3-8 characters, deterministically."""
    pieces: list[str] = []
    sizes = itertools.cycle(_PIECE_SIZES)
    start = 0
    while start < len(text):
        size = next(sizes)
        pieces.append(text[start : start + size])
        start += size
    return pieces


def _stream_chunks(chat: ChatRequest, scripted: Scripted, completion_id: str) -> list[dict[str, Any]]:
    include_usage = bool((chat.body.get("stream_options") or {}).get("include_usage"))
    base: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": chat.body.get("model", "fake-model"),
    }
    if include_usage:
        base["usage"] = None

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {**base, "choices": [choice]}

    chunks = [chunk({"role": "assistant", "content": "", "refusal": None})]
    chunks += [chunk({"reasoning_content": piece}) for piece in _pieces(scripted.reasoning or "")]
    chunks += [chunk({"content": piece}) for piece in _pieces(scripted.content or "")]
    chunks.append(chunk({}, None if scripted.omit_finish_reason else "stop"))
    if include_usage:
        chunks.append({**base, "choices": [], "usage": _usage(chat, scripted)})
    return chunks


def _sse(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


_STOPWORDS = frozenset(
    "a an and are as at be by did do does for from had has have how i in is it its me my of on or our so than that "
    "the their them there these they this to was we were what when where which who will with you your".split()
)
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
_PREFIX = re.compile(r"^\s*(query|passage):\s*", re.IGNORECASE)


def _tokens(text: str) -> list[str]:
    tokens = []
    for token in _TOKEN.findall(_PREFIX.sub("", text).lower()):
        if token in _STOPWORDS:
            continue
        if len(token) > 3 and token.endswith("s"):
            token = token[:-1]
        tokens.append(token)
    return tokens


def fake_embedding(text: str, dim: int) -> list[float]:
    """A deterministic bag-of-words vector: texts sharing words get near vectors, like a real embedding.

    Each token (a word, or a single CJK character) hashes to one coordinate and a sign; the sum is L2-normalised.
    A text without tokens maps to a fixed unit vector.
    """
    vector = [0.0] * dim
    for token in _tokens(text):
        digest = hashlib.sha256(token.encode()).digest()
        index = int.from_bytes(digest[:4], "big") % dim
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(value * value for value in vector))
    if norm == 0.0:
        return [1.0 / math.sqrt(dim)] * dim
    return [value / norm for value in vector]
