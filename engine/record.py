"""Step 6, record: the turn, its trace, the experiment result and the reply, committed together once."""

from __future__ import annotations

import time
from dataclasses import dataclass

import structlog

from engine import metrics
from engine.domain import Reply, finished_status
from engine.run import Run
from tools.storage import inbox, interactions, outbox
from tools.storage.interactions import PendingClarification, TurnRecord

log = structlog.get_logger()


@dataclass(frozen=True)
class Finished:
    reply: Reply
    outbox_id: int | None
    tools: frozenset[str] = frozenset()  # the tools this message ran (or replayed from its journal)


async def record(
    run: Run, reply: Reply, pending: PendingClarification | None, *, clear_pending: bool
) -> Finished | None:
    """Step 6: the turn, its trace, the experiment result and the reply commit together, once. `pending` is a
    new question for the member; `clear_pending` drops the one this message answered."""
    started = time.monotonic()
    message = run.message
    stats = run_stats(run)
    async with run.transaction() as conn:
        status = finished_status(reply.outcome)
        if not await inbox.finish(conn, message.inbox_id, status=status, error=reply.stats.get("error")):
            log.info("message.already_finished")
            return None
        await interactions.record_turn(
            conn,
            TurnRecord(
                household_id=message.household_id,
                user_id=message.user_id,
                inbox_id=message.inbox_id,
                channel=message.channel,
                user_text=message.text,
                reply_text=reply.text,
                outcome=reply.outcome,
                prompt_version=run.prompt_version,
                trace={"steps": run.trace, **stats},
                llm_calls=run.llm_calls + run.llm_replayed,
                tool_calls=run.tool_calls,
                tokens_in=run.tokens_in,
                tokens_out=run.tokens_out,
                latency_ms=int(stats["latency_ms"]),
                rounds=run.rounds,
                experiment=run.deps.settings.engine.experiment if run.prompt_version else None,
            ),
        )
        if pending is not None:
            await interactions.set_pending_clarification(
                conn, message.household_id, message.user_id, pending, message.chat
            )
        elif clear_pending:
            await interactions.clear_pending_clarification(conn, message.user_id, message.chat)
        outbox_id = await outbox.add(
            conn,
            household_id=message.household_id,
            user_id=message.user_id,
            inbox_id=message.inbox_id,
            channel=message.channel,
            recipient=message.reply_to or str(message.user_id),
            text=reply.text,
            payload={**reply.payload(), **({"checklist": run.checklist} if run.checklist else {})},
        )
    metrics.message_finished(message.channel, reply.outcome, time.monotonic() - run.started)
    log.info(
        "step6.record.completed",
        duration_ms=metrics.step_finished("record", time.monotonic() - started),
        outcome=reply.outcome,
        **stats,
    )
    tools = frozenset(n["tool"] for n in run.trace if n["event"] in ("tool.call", "tool.replayed"))
    return Finished(reply, outbox_id, tools)


def run_stats(run: Run) -> dict[str, float | str]:
    cache = getattr(run.deps.embedder, "cache", None)
    return {
        "embedding_cache_hit_rate": round(cache.hit_rate, 3) if cache is not None else 0.0,
        "latency_ms": round((time.monotonic() - run.started) * 1000),
        "llm_calls": run.llm_calls,
        "llm_replayed": run.llm_replayed,
        "rounds": run.rounds,
        "tool_calls": run.tool_calls,
        "tokens_in": run.tokens_in,
        "tokens_out": run.tokens_out,
        **({"route": run.route} if run.route else {}),
    }
