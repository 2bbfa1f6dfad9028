"""One message's run: its budget, its journal (replay instead of redo) and what it costs."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import structlog

from engine import metrics
from engine.deps import Deps
from engine.domain import InboundMessage
from engine.errors import BudgetExceeded, LLMError
from engine.llm_types import EventSink, EventType, LLMResponse, StreamEvent
from tools.context import ToolContext
from tools.storage import journal
from tools.storage.database import Connection
from tools.storage.households import Member

log = structlog.get_logger()


@dataclass
class Budget:
    max_tool_calls: int
    max_tokens: int
    deadline: float  # time.monotonic() value
    tool_calls: int = 0
    tokens: int = 0
    household_tokens: bool = False  # max_tokens is what is left of the household's daily allowance

    def charge_tokens(self, count: int) -> None:
        self.tokens += count
        if self.tokens > self.max_tokens:
            if self.household_tokens:
                raise BudgetExceeded("household daily tokens", self.max_tokens, household=True)
            raise BudgetExceeded("tokens", self.max_tokens)

    def charge_tool_call(self) -> None:
        self.tool_calls += 1
        if self.tool_calls > self.max_tool_calls:
            raise BudgetExceeded("tool calls", self.max_tool_calls)

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise BudgetExceeded("seconds", 0)

    def seconds_left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())


@dataclass
class Run:
    deps: Deps
    message: InboundMessage
    budget: Budget
    entries: dict[int, journal.Entry]
    sink: EventSink | None = None
    final_attempt: bool = False  # the job's last try: degrade instead of raising for a retry
    timezone: str = "UTC"
    members: tuple[Member, ...] = ()
    prompt_version: str | None = None
    route: str | None = None  # the route a routed prompt version took
    seq: int = 0
    llm_calls: int = 0
    llm_replayed: int = 0
    rounds: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tool_calls: int = 0
    trace: list[dict[str, Any]] = field(default_factory=list)
    media_ids: list[int] = field(default_factory=list)  # images the tools made, sent with the reply
    checklist: dict[str, Any] | None = None  # a list shown in the reply, for channels with tick buttons
    started: float = field(default_factory=time.monotonic)
    embed_cache: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def stream_to(self, sink: EventSink | None) -> None:
        """Send the run's events to `sink` when the message asked for a stream."""
        self.sink = sink if self.message.stream else None

    async def emit(self, type_: EventType, **data: Any) -> None:
        if self.sink is not None:
            await self.sink(StreamEvent(type_, data))

    def note(self, event: str, **data: Any) -> None:
        self.trace.append({"event": event, "t_ms": round((time.monotonic() - self.started) * 1000), **data})

    def transaction(self, *, durable: bool = True) -> AbstractAsyncContextManager[Connection]:
        """A transaction in the message's household, seeing the private memories of the member who wrote — unless
        they wrote where others read along (a group chat), where nobody's private memories are seen."""
        viewer = None if self.message.shared else self.message.user_id
        return self.deps.db.household(self.message.household_id, viewer, durable=durable)

    def tool_context(self, conn: Connection) -> ToolContext:
        return ToolContext(
            conn=conn,
            household_id=self.message.household_id,
            user_id=self.message.user_id,
            timezone=self.timezone,
            now=self.deps.clock.now(),
            embedder=self.deps.embedder,
            inbox_id=self.message.inbox_id,
            members=self.members,
            embed_cache=self.embed_cache,
            shared=self.message.shared,
        )

    async def llm(self, purpose: str, call: Callable[[], Awaitable[LLMResponse]]) -> LLMResponse:
        """Make an LLM call once per message: a retried job gets the journaled response back."""
        self.budget.check_time()
        seq = self.next_seq()
        entry = self.entries.get(seq)
        if entry is not None and entry.kind == "llm":
            response = LLMResponse.from_json(entry.payload["response"])
            self.llm_replayed += 1
            self.note("llm.replayed", purpose=purpose, seq=seq)
        else:
            response = await self._call_llm(purpose, call)
            self.llm_calls += 1
            response = await self._record_llm(seq, purpose, response)
        self.tokens_in += response.usage.prompt_tokens
        self.tokens_out += response.usage.completion_tokens
        self.budget.charge_tokens(response.usage.total)
        return response

    async def once(self, kind: str, compute: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """Compute a JSON result once per message (a transcript, an OCR text): a retried job reads the journal."""
        seq = self.next_seq()
        entry = self.entries.get(seq)
        if entry is not None and entry.kind == kind:
            return entry.payload
        return await self._journal(seq, kind, await compute())

    async def _call_llm(self, purpose: str, call: Callable[[], Awaitable[LLMResponse]]) -> LLMResponse:
        model = self.deps.settings.llm.model
        started = time.monotonic()
        try:
            response = await call()
        except LLMError:
            metrics.llm_call_failed(model, purpose)
            raise
        usage = response.usage
        metrics.llm_call(
            model,
            purpose,
            seconds=time.monotonic() - started,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
        )
        return response

    async def _record_llm(self, seq: int, purpose: str, response: LLMResponse) -> LLMResponse:
        self.note("llm.call", purpose=purpose, seq=seq, tokens=response.usage.total)
        payload = {"purpose": purpose, "response": response.to_json()}
        stored = await self._journal(seq, "llm", payload)
        return response if stored is payload else LLMResponse.from_json(stored["response"])

    async def _journal(self, seq: int, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Record `payload` as step `seq`; if another run of this message got there first, follow its journal so
        both agree."""
        message = self.message
        try:
            await journal.record_alone(
                self.deps.db,
                household_id=message.household_id,
                user_id=message.user_id,
                inbox_id=message.inbox_id,
                seq=seq,
                kind=kind,
                payload=payload,
            )
        except asyncpg.UniqueViolationError:
            async with self.transaction() as conn:
                entry = await journal.get(conn, message.inbox_id, seq)
            if entry is not None:
                return entry.payload
        return payload
