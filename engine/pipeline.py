"""The six steps: preprocess, experiment, analyse, clarify, execute and respond, record."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace

import structlog
from pydantic import ValidationError

from engine import metrics, routed
from engine.analysis import AnalysisModel, analysis_schema
from engine.context import (
    History,
    People,
    apply_people,
    base_context,
    load_people,
    read_history,
    read_people,
    serve_requests,
)
from engine.deps import Deps
from engine.domain import InboundMessage, Reply
from engine.errors import AnalysisError, BudgetExceeded, FAAError, LLMError
from engine.executor import StepResult, results_text, run_plan, run_step
from engine.llm_types import EventSink, LLMResponse, Message
from engine.preprocess import preprocess
from engine.prompts import PromptVersion, assign_variant
from engine.record import Finished, record, run_stats
from engine.replies import basic_answer, failure_text, voice_not_enabled_text
from engine.run import Budget, Run
from tools.storage import inbox, journal
from tools.storage.inbox import InboxRow
from tools.storage.interactions import PendingClarification

log = structlog.get_logger()

_RESPOND_INSTRUCTION = (
    "Tool results (JSON):\n{results}\n\nWrite the reply to the member now, as plain text (no JSON), in their "
    "language, briefly. Quote numbers "
    "exactly as the tools returned them and never compute new ones. If a step failed, say plainly what could not "
    "be done. You may call tools again to fix a failed step."
)


@dataclass(frozen=True)
class Claimed:
    """A message marked as processing, with what its steps read in the same transaction."""

    row: InboxRow
    run: Run
    people: People
    history: History


class Engine:
    def __init__(self, deps: Deps) -> None:
        self.deps = deps
        self._schema = analysis_schema()

    async def process(
        self, inbox_id: int, household_id: int, *, sink: EventSink | None = None, final_attempt: bool = False
    ) -> Finished | None:
        """Take one inbox message to its reply in the outbox (`claim`, then `answer`); `None` when it was already
        finished."""
        claimed = await self.claim(inbox_id, household_id)
        return None if claimed is None else await self.answer(claimed, sink=sink, final_attempt=final_attempt)

    async def claim(self, inbox_id: int, household_id: int) -> Claimed | None:
        """Mark the message as being processed and read what the steps need before calling the model, in one
        transaction; `None` when the message is already finished."""
        # The steps' transactions do not wait for the disk; the one that records the reply does, for them all.
        async with self.deps.db.household(household_id, durable=False) as conn:
            row = await inbox.claim(conn, inbox_id)
            if row is None:
                return None
            # Only a run that claimed the message journals, and each claim counts an attempt: on the first there is
            # no journal to read.
            entries = await journal.load(conn, inbox_id) if row.attempts > 1 else {}
            run = self._new_run(row, entries)
            people = await read_people(run, conn)
            history = await read_history(run, conn, self.deps.settings.engine.history_turns)
        return Claimed(row, run, people, history)

    async def answer(
        self, claimed: Claimed, *, sink: EventSink | None = None, final_attempt: bool = False
    ) -> Finished | None:
        """Run the steps for a claimed message and record its reply; `None` if another run recorded one first.

        Retryable failures (the LLM endpoint is down, the database hiccuped) propagate so the job runs again —
        the journal makes that cheap. On the final attempt the member gets a friendly reply instead.
        """
        run = claimed.run
        run.stream_to(sink)
        run.final_attempt = final_attempt
        inbox_id = run.message.inbox_id
        await run.emit("stream_start", message_id=inbox_id)
        pending_state: PendingClarification | None = None
        try:
            reply, pending_state = await self._steps(run, claimed.people, claimed.history)
        except BudgetExceeded as exc:
            reply = Reply(basic_answer([], exc), "degraded", media_ids=tuple(run.media_ids))
        except AnalysisError as exc:
            log.warning("step3.analysis.failed", reason=exc.reason[:200])
            reply = Reply(failure_text(run), "failed", stats={"error": f"analysis: {exc.reason[:300]}"})
        except (LLMError, FAAError, OSError) as exc:
            retryable = not isinstance(exc, LLMError) or exc.retryable
            if retryable and not final_attempt:
                await run.emit("error", message=type(exc).__name__, retrying=True)
                raise
            log.error("message.failed", error=type(exc).__name__)
            log.debug("message.failed.detail", reason=str(exc)[:500])  # may quote data: debug only
            reply = Reply(failure_text(run), "failed", stats={"error": f"{type(exc).__name__}: {str(exc)[:300]}"})
        answered = claimed.history.pending is not None and reply.outcome != "failed"
        finished = await record(run, reply, pending_state, clear_pending=answered)
        await run.emit("session_stats", **run_stats(run))
        await run.emit("stream_end", message_id=inbox_id, outcome=reply.outcome)
        return finished

    async def fail(
        self, inbox_id: int, household_id: int, reason: str, *, sink: EventSink | None = None
    ) -> Finished | None:
        """Close a message that cannot be processed with a friendly reply: never silence, never loss."""
        async with self.deps.db.household(household_id) as conn:
            row = await inbox.get(conn, inbox_id)
        if row is None or row.status in ("done", "failed"):
            return None
        run = self._new_run(row, {})
        run.stream_to(sink)
        try:
            await load_people(run)
        except FAAError:
            pass  # the reply falls back to English
        reply = Reply(failure_text(run), "failed", stats={"error": reason[:300]})
        finished = await record(run, reply, None, clear_pending=False)
        await run.emit("stream_end", message_id=inbox_id, outcome=reply.outcome)
        return finished

    def _new_run(self, row: InboxRow, entries: dict[int, journal.Entry]) -> Run:
        message = InboundMessage.from_payload(
            inbox_id=row.id,
            household_id=row.household_id,
            user_id=row.user_id,
            channel=row.channel,
            external_id=row.external_id,
            text=row.text,
            trace_id=row.trace_id,
            received_at=row.received_at,
            payload=row.payload,
        )
        settings = self.deps.settings.engine
        budget = Budget(settings.max_tool_calls, settings.max_tokens, time.monotonic() + settings.max_seconds)
        return Run(self.deps, message, budget, entries)

    async def _steps(self, run: Run, people: People, history: History) -> tuple[Reply, PendingClarification | None]:
        apply_people(run, people)  # before preprocess: a polite reply there speaks the member's language
        preprocessed = await preprocess(run)
        if preprocessed.unheard_voice:
            return Reply(voice_not_enabled_text(run), "degraded"), None
        text = preprocessed.text
        version = self._experiment(run)
        if version.routed:
            return await routed.answer(run, version, text, history)
        if not version.full_context:
            history = replace(history, turns=[])
        messages: list[Message] = [
            {"role": "system", "content": version.system},
            {"role": "user", "content": f"Context:\n{base_context(run, history)}\n\nMessage:\n{text}"},
        ]
        analysis = await self._analyse(run, version, messages)
        if analysis.clarification is not None:
            return self._clarify(run, analysis, text, history.pending)
        started = time.monotonic()
        results = await run_plan(run, analysis.tool_plan) if analysis.tool_plan else []
        reply_text = await self._respond(run, messages, analysis, results)
        log.info(
            "step5.execution.completed",
            duration_ms=_step("execute", started),
            tool_calls=len(results),
            failed=sum(not r.ok for r in results),
        )
        degraded = any(not r.ok for r in results)
        return Reply(reply_text, "degraded" if degraded else "answered", media_ids=tuple(run.media_ids)), None

    def _experiment(self, run: Run) -> PromptVersion:
        started = time.monotonic()
        settings = self.deps.settings.engine
        variant = assign_variant(settings.experiment, run.message.user_id, settings.variants)
        version = self.deps.prompts.get(variant)
        run.note("experiment", experiment=settings.experiment, variant=variant)
        log.info(
            "step2.experiment.assigned",
            duration_ms=_step("experiment", started),
            experiment=settings.experiment,
            variant=variant,
        )
        run.prompt_version = variant
        return version

    async def _analyse(self, run: Run, version: PromptVersion, messages: list[Message]) -> AnalysisModel:
        started = time.monotonic()
        max_rounds = min(version.max_rounds, self.deps.settings.engine.max_rounds)
        for round_no in range(1, max_rounds + 1):
            run.rounds = round_no
            log.info("analysis.round.started", round=round_no)
            analysis = await self._analysis_call(run, messages)
            if not analysis.context_requests or round_no == max_rounds:
                break
            context = await serve_requests(run, analysis.context_requests)
            messages.append({"role": "assistant", "content": analysis.model_dump_json(exclude_none=True)})
            messages.append(
                {"role": "user", "content": f"Context you asked for (JSON):\n{context}\n\nNow give the final analysis."}
            )
        log.info(
            "step3.analysis.completed",
            duration_ms=_step("analyse", started),
            rounds=run.rounds,
            intent=analysis.understanding.intent,
            planned_tools=len(analysis.tool_plan),
            clarify=analysis.clarification is not None,
        )
        messages.append({"role": "assistant", "content": analysis.model_dump_json(exclude_none=True)})
        return analysis

    async def _analysis_call(self, run: Run, messages: list[Message]) -> AnalysisModel:
        """One structured call; an invalid answer goes back once with the validation error."""
        llm = self.deps.llm
        response = await run.llm(
            "analysis", lambda: llm.complete(messages, response_schema=self._schema, schema_name="analysis")
        )
        try:
            return _parse_analysis(response)
        except AnalysisError as first:
            log.info("step3.analysis.repairing", reason=first.reason[:200])
            repair = [
                *messages,
                {"role": "assistant", "content": response.content or ""},
                {
                    "role": "user",
                    "content": f"Your answer was not valid: {first.reason}\nAnswer again with one JSON object "
                    "that matches the schema exactly.",
                },
            ]
            repaired = await run.llm(
                "analysis.repair", lambda: llm.complete(repair, response_schema=self._schema, schema_name="analysis")
            )
            return _parse_analysis(repaired)

    def _clarify(
        self, run: Run, analysis: AnalysisModel, text: str, previous: PendingClarification | None
    ) -> tuple[Reply, PendingClarification]:
        assert analysis.clarification is not None
        started = time.monotonic()
        original = previous.state.get("text", "") + "\n" + text if previous else text
        pending = PendingClarification(
            inbox_id=run.message.inbox_id,
            question=analysis.clarification.question,
            options=analysis.clarification.options,
            state={"text": original.strip()[:2000], "summary": analysis.understanding.summary},
        )
        log.info("step4.clarify.requested", duration_ms=_step("clarify", started), options=len(pending.options))
        return Reply(pending.question, "clarifying", options=tuple(pending.options)), pending

    async def _respond(
        self, run: Run, messages: list[Message], analysis: AnalysisModel, results: list[StepResult]
    ) -> str:
        ready = analysis.response.reply
        if ready and all(r.ok for r in results) and not (analysis.response.needs_tool_results and results):
            await run.emit("content_delta", text=ready)
            return ready
        messages.append({"role": "user", "content": _RESPOND_INSTRUCTION.format(results=results_text(results))})
        max_rounds = self.deps.settings.engine.max_verification_rounds
        try:
            for verification in range(max_rounds + 1):
                native = self.deps.settings.llm.native_tools
                tools = self.deps.registry.specs() if native and verification < max_rounds else None
                response = await run.llm("respond", lambda tools=tools: self._reply_call(run, messages, tools))
                if not (response.tool_calls and tools):
                    return (response.content or "").strip() or basic_answer(results)
                results = results + await self._verify(run, messages, response)
        except LLMError:
            if not results:
                raise
            # The effects are journaled; the member still learns what happened.
            log.warning("step5.respond.degraded")
            return basic_answer(results)
        return basic_answer(results)

    async def _reply_call(self, run: Run, messages: list[Message], tools: list[dict] | None) -> LLMResponse:
        llm = self.deps.llm
        if run.sink is not None and self.deps.settings.llm.streaming:
            return await llm.stream(messages, emit=run.sink, tools=tools)
        response = await llm.complete(messages, tools=tools)
        if response.content:
            await run.emit("content_delta", text=response.content)
        return response

    async def _verify(self, run: Run, messages: list[Message], response: LLMResponse) -> list[StepResult]:
        messages.append(
            {
                "role": "assistant",
                "content": response.content,
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in response.tool_calls
                ],
            }
        )
        results = []
        for call in response.tool_calls:
            result = await run_step(run, run.next_seq(), call.id, call.name, call.arguments)
            results.append(result)
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result.for_model(), default=str)}
            )
        return results


def _parse_analysis(response: LLMResponse) -> AnalysisModel:
    raw = response.content or ""
    try:
        return AnalysisModel.model_validate_json(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'root'}: {err['msg']}" for err in exc.errors()[:8]
        )
        raise AnalysisError(problems or "not valid JSON", raw=raw[:2000]) from exc


def _step(step: str, started: float) -> int:
    """Observe a finished step in the metrics; its duration in ms, for the step's log line."""
    return metrics.step_finished(step, time.monotonic() - started)
