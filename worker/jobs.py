"""arq jobs: thin wrappers that bind the log context and call the engine or a sender."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import structlog
from arq import Retry

from bot.live import RedisEventSink
from engine.deps import DeliveryError, Deps
from engine.llm_types import EventSink
from engine.pipeline import Engine
from engine.record import Finished
from tools.infra.queue import HANDLE_JOB, inbox_job_id
from tools.reminders import RESCHEDULING_TOOLS
from tools.storage import inbox, outbox
from tools.storage.inbox import InboxRow
from worker.reminder_queue import enqueue_for_message

log = structlog.get_logger()

DELIVER_JOB = "deliver_outbound"
# A reply is delivered within a second or its retry is scheduled; the sweeper steps in only after this long.
_OUTBOX_GRACE_S = 30.0
# A queued message whose job is still in Redis is left alone (arq dedupes by job id); after this long the
# sweeper checks that it is.
_QUEUED_GRACE_S = 15.0
_TYPING_EVERY_S = 4.5


def outbox_job_id(outbox_id: int, attempt: int = 0) -> str:
    return f"outbox:{outbox_id}:{attempt}"


def _backoff(job_try: int, cap: float = 300.0) -> float:
    return min(cap, 2.0**job_try)


async def handle_inbound(ctx: dict[str, Any], inbox_id: int, household_id: int) -> str:
    deps: Deps = ctx["deps"]
    engine: Engine = ctx["engine"]
    job_try = int(ctx.get("job_try", 1))
    structlog.contextvars.bind_contextvars(inbox_id=inbox_id, household_id=household_id, job_try=job_try)
    try:
        finished = await _run_engine(deps, engine, inbox_id, household_id, job_try)
        # Reminders are rows first, jobs second: now that the message committed, enqueue what it scheduled
        # (again after a retried run: the job ids dedupe). A message that touched no reminder costs no query.
        if finished is None or finished.tools & RESCHEDULING_TOOLS:
            await enqueue_for_message(deps, inbox_id, household_id)
        if finished is None:
            return "already finished"
        if finished.outbox_id is not None:
            # Deliver right here rather than through another queue hop; failures re-enqueue a delivery job,
            # and the sweeper covers a crash in between.
            await deliver_outbound(ctx, finished.outbox_id, household_id)
        return finished.reply.outcome
    finally:
        structlog.contextvars.unbind_contextvars("inbox_id", "household_id", "job_try", "trace_id")


async def _run_engine(deps: Deps, engine: Engine, inbox_id: int, household_id: int, job_try: int) -> Finished | None:
    """The engine's run of the message. A failure raises `Retry` until the job's last try, which answers the
    member with a friendly failure instead."""
    final = job_try >= deps.settings.worker.max_tries
    sink: EventSink | None = None
    try:
        claimed = await engine.claim(inbox_id, household_id)
        if claimed is None:
            return None
        structlog.contextvars.bind_contextvars(trace_id=claimed.row.trace_id)
        sink = _event_sink(deps, claimed.row)
        async with _typing(deps, claimed.row):
            return await engine.answer(claimed, sink=sink, final_attempt=final)
    except Exception as exc:
        if not final:
            log.warning("message.retrying", error=type(exc).__name__, defer_s=_backoff(job_try))
            raise Retry(defer=_backoff(job_try)) from exc
        log.error("message.failed", error=type(exc).__name__)
        return await engine.fail(inbox_id, household_id, f"{type(exc).__name__}: {exc}", sink=sink)


def _event_sink(deps: Deps, row: InboxRow) -> EventSink | None:
    """Stream events go to the channel's own sink when its sender has one (Telegram drafts), else to Redis for
    the web API's SSE endpoint."""
    if not row.payload.get("stream"):
        return None
    stream_sink = getattr(deps.senders.get(row.channel), "stream_sink", None)
    if stream_sink is not None:
        return stream_sink(str(row.payload.get("reply_to", "")), row.id)
    return RedisEventSink(deps.redis, row.id)


@contextlib.asynccontextmanager
async def _typing(deps: Deps, row: InboxRow) -> AsyncIterator[None]:
    """While the engine works, a channel whose sender can show it (Telegram's typing action) shows it; the
    action fades after ~5 s, so it is repeated until the engine is done."""
    show = getattr(deps.senders.get(row.channel), "typing", None)
    if show is None:
        yield
        return
    recipient = str(row.payload.get("reply_to", ""))
    await show(recipient)

    async def repeat() -> None:
        while True:
            await asyncio.sleep(_TYPING_EVERY_S)
            await show(recipient)

    task = asyncio.create_task(repeat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def deliver_outbound(ctx: dict[str, Any], outbox_id: int, household_id: int) -> str:
    """Deliver one outbox row on its channel; the row lock keeps two workers from sending it twice."""
    deps: Deps = ctx["deps"]
    max_attempts = deps.settings.worker.delivery_max_attempts
    retry_in: float | None = None
    async with deps.db.household(household_id) as conn:
        row = await outbox.lock_pending(conn, outbox_id)
        if row is None:
            return "nothing to deliver"
        sender = deps.senders.get(row.channel)
        try:
            if sender is None:
                raise DeliveryError(f"no sender for channel {row.channel!r}", permanent=True)
            await sender.send(row)
        except DeliveryError as exc:
            final = exc.permanent or row.attempts + 1 >= max_attempts
            retry_in = None if final else (exc.retry_after_s or _backoff(row.attempts + 1))
            await outbox.mark_attempt_failed(
                conn, outbox_id, exc.reason, retry_in=None if retry_in is None else timedelta(seconds=retry_in)
            )
            log.warning("reply.delivery.failed", channel=row.channel, permanent=final, attempts=row.attempts + 1)
            if final:
                return "failed"
        else:
            await outbox.mark_sent(conn, outbox_id)
            log.info("reply.delivered", channel=row.channel, outbox_id=outbox_id)
            return "sent"
    await deps.redis.enqueue_job(
        DELIVER_JOB, outbox_id, household_id, _job_id=outbox_job_id(outbox_id, row.attempts + 1), _defer_by=retry_in
    )
    return "retrying"


async def sweep(ctx: dict[str, Any]) -> dict[str, int]:
    """Re-enqueue what a lost job left behind: queued messages nobody picked up, processing messages whose
    worker died, and overdue outbox rows."""
    deps: Deps = ctx["deps"]
    settings = deps.settings.worker
    async with deps.db.unscoped() as conn:
        unqueued = await inbox.stale(conn, "queued", _QUEUED_GRACE_S)
        abandoned = await inbox.stale(conn, "processing", settings.stale_after_s)
        due = await outbox.due(conn, _OUTBOX_GRACE_S)
    requeued = 0
    for inbox_id, household_id in unqueued:
        # The canonical job id: arq refuses it while the job still waits in the queue, so only lost ones return.
        job = await deps.redis.enqueue_job(HANDLE_JOB, inbox_id, household_id, _job_id=inbox_job_id(inbox_id))
        requeued += job is not None
    for inbox_id, household_id in abandoned:
        async with deps.db.household(household_id) as conn:
            await inbox.touch(conn, inbox_id)
            row = await inbox.get(conn, inbox_id)
        attempt = row.attempts if row else 0
        job = await deps.redis.enqueue_job(
            HANDLE_JOB, inbox_id, household_id, _job_id=f"{inbox_job_id(inbox_id)}:sweep{attempt}"
        )
        requeued += job is not None
    redelivered = 0
    for outbox_id, household_id in due:
        async with deps.db.household(household_id) as conn:
            row = await outbox.get(conn, outbox_id)
        if row is None:
            continue
        job = await deps.redis.enqueue_job(
            DELIVER_JOB, outbox_id, household_id, _job_id=outbox_job_id(outbox_id, row.attempts) + ":sweep"
        )
        redelivered += job is not None
    if requeued or redelivered:
        log.info("sweeper.completed", inbox_requeued=requeued, outbox_requeued=redelivered)
    return {"inbox": requeued, "outbox": redelivered}
