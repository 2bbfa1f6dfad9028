"""Step 5's first half: run a tool plan — validated, journaled, independent steps concurrently.

A step that fails for a reason the model can fix goes back to it (`fixable`); one that fails for a reason nobody can
fix (a bug, data the database refuses) is reported as failed, and the reply says what could not be done. A transient
failure (the database or the embedding endpoint stalled or dropped the connection) propagates, so the job runs again
and the journal replays what already committed — except on the job's last try, where it too is a failed step.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import asyncpg
import structlog

from engine import metrics
from engine.analysis import PlannedCall
from engine.checklists import checklist
from engine.errors import FAAError, PlanningError, ToolError, ToolRetry, ToolTimeoutError
from engine.run import Run
from tools.infra.embeddings import EmbeddingKind
from tools.storage import journal

log = structlog.get_logger()


@dataclass(frozen=True)
class StepResult:
    id: str
    tool: str
    ok: bool
    result: dict[str, Any] | None = None
    error: str | None = None  # for the model: what to fix, where ids come from
    fixable: bool = False  # the model can fix it (bad arguments); otherwise the tool itself failed
    writes: bool = False
    problem: str | None = None  # a failure's kind: "invalid", "not_found", "not_allowed" or "failed"
    for_member: str | None = None  # a failure as the tool said it to a member, when it did

    def for_model(self) -> dict[str, Any]:
        if self.ok:
            return {"id": self.id, "tool": self.tool, "ok": True, "result": self.result}
        return {"id": self.id, "tool": self.tool, "ok": False, "error": self.error, "fixable": self.fixable}

    def member_reason(self) -> str | None:
        """Why the step failed, in words a member may read (never the hints written for the model)."""
        if self.ok:
            return None
        return self.for_member or _MEMBER_REASONS.get(self.problem or "failed", _MEMBER_REASONS["failed"])


_MEMBER_REASONS = {
    "invalid": "it did not fit",
    "not_found": "it is not there",
    "not_allowed": "you may not change that",
    "failed": "something went wrong",
}


def _refused(step_id: str, tool_name: str, exc: ToolRetry, *, writes: bool = False) -> StepResult:
    return StepResult(
        step_id, tool_name, False, error=exc.message, fixable=True, writes=writes, problem=exc.problem,
        for_member=exc.for_member,
    )  # fmt: skip


def waves(plan: list[PlannedCall]) -> list[list[PlannedCall]]:
    """Group steps so each group depends only on earlier groups; steps of one group run concurrently."""
    ids = [step.id for step in plan]
    if len(set(ids)) != len(ids):
        raise PlanningError(f"step ids must be unique: {ids}")
    known = set(ids)
    for step in plan:
        unknown = set(step.depends_on) - known
        if unknown:
            raise PlanningError(f"step {step.id} depends on unknown steps {sorted(unknown)}")
    done: set[str] = set()
    remaining = list(plan)
    grouped = []
    while remaining:
        ready = [s for s in remaining if set(s.depends_on) <= done]
        if not ready:
            raise PlanningError(f"the plan has a dependency cycle among {[s.id for s in remaining]}")
        grouped.append(ready)
        done.update(s.id for s in ready)
        remaining = [s for s in remaining if s.id not in done]
    return grouped


async def run_plan(run: Run, plan: list[PlannedCall]) -> list[StepResult]:
    """Run every step; a step whose dependency failed is skipped with a reason."""
    grouped = waves(plan)
    # Journal numbers are fixed before anything runs, so a replay matches steps to entries however they interleave.
    seqs = {step.id: run.next_seq() for step in plan}
    results: dict[str, StepResult] = {}
    for group in grouped:
        runnable = []
        for step in group:
            failed = [d for d in step.depends_on if not results[d].ok]
            if failed:
                results[step.id] = StepResult(step.id, step.tool, False, error=f"skipped: {failed} failed")
            else:
                runnable.append(step)
        # Every step of the group finishes (none is left running behind a failure) before one's error propagates.
        outcomes = await asyncio.gather(
            *(run_step(run, seqs[s.id], s.id, s.tool, s.args) for s in runnable), return_exceptions=True
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
            results[outcome.id] = outcome
    return [results[step.id] for step in plan]


async def run_step(run: Run, seq: int, step_id: str, tool_name: str, raw_args: str | dict[str, Any]) -> StepResult:
    registry = run.deps.registry
    entry = run.entries.get(seq)
    if entry is not None and entry.kind == "tool":
        run.note("tool.replayed", tool=tool_name, seq=seq)
        return _keep_media(run, _from_entry(step_id, entry))
    try:
        tool = registry.get(tool_name)
        args = registry.validate(tool_name, raw_args)
    except ToolRetry as exc:
        return await _finish(run, _refused(step_id, tool_name, exc))
    run.budget.charge_tool_call()
    await run.emit("tool_use", id=step_id, name=tool_name, arguments=args.model_dump(mode="json"))
    try:
        result = await _execute(run, seq, tool_name, args)
    except ToolRetry as exc:
        outcome = _refused(step_id, tool_name, exc, writes=tool.writes)
    except FAAError as exc:
        if exc.transient and not run.final_attempt:
            log.warning("tool.call.interrupted", tool=tool_name, error=type(exc).__name__)
            raise
        reason = exc.reason if isinstance(exc, ToolError) else f"{type(exc).__name__}: {str(exc)[:200]}"
        outcome = StepResult(step_id, tool_name, False, error=reason, writes=tool.writes, problem="failed")
    else:
        outcome = StepResult(step_id, tool_name, True, result=result, writes=tool.writes)
    return await _finish(run, outcome)


# Tools embed `content` as a passage (store, update) and `query` as a query (search). Embedding before the
# transaction opens keeps a pooled connection from waiting on the embedding endpoint; the tool then finds the
# vector in the message's cache.
_EMBEDDED_FIELDS: tuple[tuple[str, EmbeddingKind], ...] = (("content", "passage"), ("query", "query"))


async def _embed_ahead(run: Run, args: Any) -> None:
    for field, kind in _EMBEDDED_FIELDS:
        text = getattr(args, field, None)
        if isinstance(text, str) and text.strip() and (kind, text) not in run.embed_cache:
            [run.embed_cache[(kind, text)]] = await run.deps.embedder.embed([text], kind)


async def _execute(run: Run, seq: int, tool_name: str, args: Any) -> dict[str, Any]:
    """Run the tool and journal its result in one transaction: the effect and its record commit together."""
    timeout = min(run.deps.settings.engine.tool_timeout_s, max(run.budget.seconds_left(), 0.1))
    message = run.message
    try:
        async with asyncio.timeout(timeout):
            await _embed_ahead(run, args)
            async with run.transaction(durable=False) as conn:
                result = await run.deps.registry.run(run.tool_context(conn), tool_name, args)
                await journal.record(
                    conn,
                    household_id=message.household_id,
                    inbox_id=message.inbox_id,
                    seq=seq,
                    kind="tool",
                    payload={
                        "tool": tool_name,
                        "ok": True,
                        "writes": run.deps.registry.get(tool_name).writes,
                        "result": result,
                    },
                )
                return result
    except TimeoutError:
        raise ToolTimeoutError(tool_name, timeout) from None
    except asyncpg.UniqueViolationError as exc:
        if getattr(exc, "constraint_name", None) != "journal_pkey":
            raise ToolRetry(tool_name, f"conflicts with an existing row: {exc.detail or exc}") from exc
        # A concurrent run of this message committed the same step first; ours rolled back. Use theirs.
        async with run.transaction() as conn:
            entry = await journal.get(conn, message.inbox_id, seq)
        if entry is None or not entry.payload.get("ok"):
            raise ToolError(tool_name, "a concurrent run of this message failed this step") from exc
        return dict(entry.payload["result"])
    except asyncpg.PostgresError as exc:  # data the database refuses; what time can fix is a StorageError already
        raise ToolError(tool_name, type(exc).__name__) from exc


def _keep_media(run: Run, outcome: StepResult) -> StepResult:
    """A tool that made an image (render_chart) returns its `media_id`; the reply carries it to the channel."""
    media_id = (outcome.result or {}).get("media_id") if outcome.ok else None
    if isinstance(media_id, int) and media_id not in run.media_ids:
        run.media_ids.append(media_id)
    return outcome


def _keep_checklist(run: Run, outcome: StepResult) -> None:
    """A reply that shows one shared list carries it as a checklist: a channel with buttons adds tick buttons."""
    lists = (outcome.result or {}).get("lists") if outcome.ok and outcome.tool == "show_list" else None
    if isinstance(lists, list) and len(lists) == 1:
        run.checklist = checklist(lists[0])


async def _finish(run: Run, outcome: StepResult) -> StepResult:
    _keep_media(run, outcome)
    _keep_checklist(run, outcome)
    run.tool_calls += 1
    result = "ok" if outcome.ok else "invalid" if outcome.fixable else "error"
    metrics.tool_call(outcome.tool, result, run.deps.registry.names())
    run.note("tool.call", tool=outcome.tool, ok=outcome.ok, error=outcome.error)
    log.info("tool.call.completed", tool=outcome.tool, ok=outcome.ok, fixable=outcome.fixable)
    # The event reaches the member's browser or app: it carries the member's reason, not the model's hint.
    await run.emit("tool_result", id=outcome.id, name=outcome.tool, ok=outcome.ok, error=outcome.member_reason())
    return outcome


def _from_entry(step_id: str, entry: journal.Entry) -> StepResult:
    payload = entry.payload
    return StepResult(step_id, payload["tool"], True, result=payload["result"], writes=payload.get("writes", False))
