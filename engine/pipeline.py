"""The six steps: preprocess, experiment, analyse, clarify, execute and respond, record."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import structlog

from engine import consent, metrics, routed
from engine.context import (
    History,
    People,
    apply_people,
    load_people,
    read_history,
    read_people,
)
from engine.deps import Deps
from engine.domain import InboundMessage, Reply
from engine.errors import AnalysisError, BudgetExceeded, FAAError
from engine.llm_types import EventSink
from engine.preprocess import preprocess
from engine.prompts import PromptVersion, assign_variant
from engine.record import Finished, record, run_stats
from engine.replies import basic_answer, failure_text, voice_not_enabled_text
from engine.run import Budget, Run
from tools.storage import inbox, journal
from tools.storage.inbox import InboxRow
from tools.storage.interactions import PendingClarification

log = structlog.get_logger()


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

        A transient failure (the LLM endpoint is down, the database stalled) propagates so the job runs again — the
        journal makes that cheap. Any other failure, and a transient one on the final attempt, gets the member a
        friendly reply at once: retrying would meet the same model and the same data.
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
        except FAAError as exc:
            if exc.transient and not final_attempt:
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
        if preprocessed.calendar:
            return Reply("\n".join(preprocessed.calendar), "answered"), None
        text = preprocessed.text
        pending = history.pending
        if pending is not None and "consent" in pending.state:
            decided = await consent.resume(run, pending, text)
            if decided is not None:
                return decided, None
            history = replace(history, pending=None)  # a new message: the kept plan is dropped with the question
        return await routed.answer(run, self._experiment(run), text, history)

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


def _step(step: str, started: float) -> int:
    """Observe a finished step in the metrics; its duration in ms, for the step's log line."""
    return metrics.step_finished(step, time.monotonic() - started)
