"""Answering inbox messages: the engine's run of one message (with the channel's typing action and stream events),
the turn it hands on when it finishes, and the sweep that re-enqueues messages a lost job left behind."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import structlog
from arq import Retry
from redis.exceptions import RedisError

from bot.channels.intake import next_turns
from bot.channels.live import RedisEventSink, announce_household_change
from engine.deps import Deps
from engine.errors import FAAError, StorageError
from engine.llm_types import EventSink
from engine.pipeline import Engine
from engine.record import Finished
from tools.infra.queue import HANDLE_INBOUND, inbox_job_id, waits_in_queue
from tools.reminders import RESCHEDULING_TOOLS
from tools.storage import budgets, inbox
from tools.storage.inbox import InboxRow
from worker import delivery, reminders

log = structlog.get_logger()

# A message waits a while before the sweep gives its household its turns: a message that finishes, or the intake of
# the next one, gives them first; the sweep is for a turn nobody gave (a job that died in between, Redis down).
_WAITING_GRACE_S = 15.0
_TYPING_EVERY_S = 4.5
_SWEEP_PAGE = 200
# The tools that may change what the Reminders page lists (forgetting a member takes their reminders with them).
REMINDER_TOOLS = RESCHEDULING_TOOLS | {"cancel_reminder", "cancel_event", "forget", "forget_me"}
# The tools that store or change an expense, and so may set off a budget alert.
EXPENSE_TOOLS = frozenset({"store", "update_memory_fields"})


async def answer(deps: Deps, engine: Engine, inbox_id: int, household_id: int, job_try: int) -> str:
    """Answer one message and deliver the reply; what it came to ("waiting" for its turn, "already finished", or
    the reply's outcome)."""
    if not await _admitted(deps, inbox_id, household_id, job_try):
        return "waiting"  # its member or household has its fill in flight: a finishing message gives it its turn
    async with _lease(deps, inbox_id, household_id):
        finished = await _run_engine(deps, engine, inbox_id, household_id, job_try)
    try:
        await next_turns(deps, household_id)  # its slot is free (a retried run raised above and still holds it)
    except (StorageError, RedisError, OSError) as exc:  # the sweep hands the slot on instead
        log.warning("message.turns.not_given", error=type(exc).__name__)
    # Reminders are rows first, jobs second: now that the message committed, enqueue what it scheduled
    # (again after a retried run: the job ids dedupe). A message that touched no reminder costs no query.
    if finished is None or finished.tools & RESCHEDULING_TOOLS:
        await reminders.enqueue_for_message(deps, inbox_id, household_id)
    if finished is None:
        return "already finished"
    if finished.tools & REMINDER_TOOLS:  # open Reminders pages show what the message set, moved or cancelled
        await announce_household_change(deps, household_id, "reminders")
    if finished.tools & EXPENSE_TOOLS:  # budget alerts the message's expenses set off, each adult on their channel
        async with deps.db.household(household_id) as conn:
            alerts = await budgets.pending_alerts(conn, household_id, inbox_id)
        for outbox_id in alerts:
            await delivery.deliver(deps, outbox_id, household_id)
    if finished.outbox_id is not None:
        # Deliver right here rather than through another queue hop; failures re-enqueue a delivery job,
        # and the sweeper covers a crash in between.
        await delivery.deliver(deps, finished.outbox_id, household_id)
    return finished.reply.outcome


async def _admitted(deps: Deps, inbox_id: int, household_id: int, job_try: int) -> bool:
    ws = deps.settings.worker
    try:
        async with deps.db.household(household_id) as conn:
            return await inbox.admit(
                conn, inbox_id, household_id, per_member=ws.member_in_flight, per_household=ws.household_in_flight
            )
    except StorageError as exc:
        if not exc.transient:
            raise
        log.warning("message.admission.retrying", error=exc.reason[:200], defer_s=delivery.backoff(job_try))
        raise Retry(defer=delivery.backoff(job_try)) from exc


async def _run_engine(deps: Deps, engine: Engine, inbox_id: int, household_id: int, job_try: int) -> Finished | None:
    """The engine's run of the message. A transient failure raises `Retry` (with backoff) until the job's last try;
    any other failure, and a transient one on the last try, answers the member with a friendly failure at once."""
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
        transient = isinstance(exc, FAAError) and exc.transient  # anything not FAA's own is a bug: not transient
        if transient and not final:
            log.warning("message.retrying", error=type(exc).__name__, defer_s=delivery.backoff(job_try))
            raise Retry(defer=delivery.backoff(job_try)) from exc
        log.error("message.failed", error=type(exc).__name__, transient=transient)
        return await engine.fail(inbox_id, household_id, f"{type(exc).__name__}: {exc}", sink=sink)


@contextlib.asynccontextmanager
async def _lease(deps: Deps, inbox_id: int, household_id: int) -> AsyncIterator[None]:
    """While the engine works on a message, its row is touched every third of the lease: the sweep takes over a
    message whose lease ran out (its worker was killed, or its job was lost with Redis) within seconds of that,
    instead of after the job's timeout."""
    every_s = deps.settings.worker.lease_s / 3

    async def renew() -> None:
        while True:
            await asyncio.sleep(every_s)
            try:
                async with deps.db.household(household_id) as conn:
                    await inbox.renew(conn, inbox_id)
            except StorageError as exc:  # the run itself meets the same database and decides what to do
                log.warning("message.lease.not_renewed", error=exc.reason[:200])

    task = asyncio.create_task(renew())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


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


async def _take_over(deps: Deps, inbox_id: int, household_id: int) -> int:
    """A job of its own for an admitted message whose lease ran out and whose job is not waiting in arq's queue
    (it died with its worker, or was lost with Redis); touched either way, so the next take-over is a lease away.
    The id is new each time, since a job id held by a dead worker stays unusable until arq's job timeout."""
    async with deps.db.household(household_id) as conn:
        await inbox.touch(conn, inbox_id)
    if await waits_in_queue(deps.redis, inbox_id):
        return 0  # admitted while the queue was long, or deferred to a retry: its job runs it
    job_id = f"{inbox_job_id(inbox_id)}:sweep{time.time_ns() // 1_000_000}"
    return int(await deps.redis.enqueue_job(HANDLE_INBOUND, inbox_id, household_id, _job_id=job_id) is not None)


async def requeue_stale(deps: Deps) -> int:
    """Give their turns to the households with messages waiting (a turn a finishing job could not hand on, a message
    accepted while Redis was down), and a job to admitted messages whose lease ran out; how many jobs it enqueued.
    A waiting message has no job, so none is looked up in Redis; a household that is at its fill costs one query."""
    requeued = 0
    after = 0
    while True:
        async with deps.db.unscoped() as conn:
            households = await inbox.waiting_households(conn, _WAITING_GRACE_S, after, _SWEEP_PAGE)
        for household_id in households:
            requeued += len(await next_turns(deps, household_id))
        if len(households) < _SWEEP_PAGE:
            break
        after = households[-1]
    while True:  # each one taken over is touched: while pages bring lost ones the sweep pages on
        before = requeued
        async with deps.db.unscoped() as conn:
            abandoned = await inbox.expired_leases(conn, deps.settings.worker.lease_s, _SWEEP_PAGE)
        for inbox_id, household_id in abandoned:
            requeued += await _take_over(deps, inbox_id, household_id)
        if requeued == before or len(abandoned) < _SWEEP_PAGE:
            return requeued
