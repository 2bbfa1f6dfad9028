"""Every job the worker runs, and the names they run under.

The jobs are thin: each takes the process's dependencies from arq's context, binds the log context and calls the
module that does the work (`messages`, `delivery`, `reminders`, `digests`). They are registered under the names
in `tools.infra.queue`, where everything that enqueues a job takes them from; the cron jobs are named by arq.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import structlog
from arq import cron
from arq.cron import CronJob
from arq.worker import Function, func

from engine.deps import Deps
from tools.infra.queue import DELIVER_OUTBOUND, FIRE_REMINDER, HANDLE_INBOUND, RUN_DIGEST
from tools.storage.digests import Occurrence
from worker import delivery, digests, messages, reminders

log = structlog.get_logger()


@contextlib.contextmanager
def _bound(**values: Any) -> Iterator[None]:
    structlog.contextvars.bind_contextvars(**values)
    try:
        yield
    finally:
        structlog.contextvars.unbind_contextvars(*values)


async def handle_inbound(ctx: dict[str, Any], inbox_id: int, household_id: int) -> str:
    """Answer one inbox message and deliver the reply (retried with backoff until the last try)."""
    job_try = int(ctx.get("job_try", 1))
    with _bound(inbox_id=inbox_id, household_id=household_id, job_try=job_try):
        try:
            return await messages.answer(ctx["deps"], ctx["engine"], inbox_id, household_id, job_try)
        finally:
            structlog.contextvars.unbind_contextvars("trace_id")  # bound by the engine's run


async def deliver_outbound(ctx: dict[str, Any], outbox_id: int, household_id: int) -> str:
    """Deliver one outbox row on its channel."""
    return await delivery.deliver(ctx["deps"], outbox_id, household_id)


async def fire_reminder(ctx: dict[str, Any], reminder_id: int, household_id: int, fire_at: str) -> str:
    """Fire one occurrence of a reminder and deliver it."""
    with _bound(reminder_id=reminder_id, household_id=household_id):
        return await reminders.fire(ctx["deps"], reminder_id, household_id, datetime.fromisoformat(fire_at))


async def run_digest(
    ctx: dict[str, Any], household_id: int, kind: str, period_start: str, period_end: str, due_at: str
) -> str:
    """Gather, phrase and send one household's digest for one period, once."""
    occurrence = Occurrence(
        kind, date.fromisoformat(period_start), date.fromisoformat(period_end), datetime.fromisoformat(due_at)
    )
    with _bound(household_id=household_id, digest=kind, period=period_start):
        return await digests.send(ctx["deps"], household_id, occurrence)


async def sweep(ctx: dict[str, Any]) -> dict[str, int]:
    """Re-enqueue what a lost job left behind: queued messages nobody picked up, processing messages whose
    worker died, and overdue outbox rows."""
    deps: Deps = ctx["deps"]
    requeued = await messages.requeue_stale(deps)
    redelivered = await delivery.requeue_due(deps)
    if requeued or redelivered:
        log.info("sweeper.completed", inbox_requeued=requeued, outbox_requeued=redelivered)
    return {"inbox": requeued, "outbox": redelivered}


async def sweep_reminders(ctx: dict[str, Any]) -> dict[str, int]:
    """Fire the reminders that are due and unfired; enqueue the jobs of those coming due."""
    return await reminders.sweep(ctx["deps"])


async def sweep_digests(ctx: dict[str, Any], *, now: datetime | None = None) -> int:
    """Enqueue every digest due now and not yet sent."""
    return await digests.enqueue_due(ctx["deps"], now or datetime.now(UTC))


FUNCTIONS: list[Function] = [
    func(handle_inbound, name=HANDLE_INBOUND),
    func(deliver_outbound, name=DELIVER_OUTBOUND),
    func(fire_reminder, name=FIRE_REMINDER),
    func(run_digest, name=RUN_DIGEST),
]

CRON_JOBS: list[CronJob] = [
    # On the same seconds: arq runs them in one pass. The message sweep runs every 15 s (`delivery.SWEEP_EVERY_S`),
    # so a message whose lease ran out (WORKER_LEASE_S) returns soon after; it costs two indexed queries when there
    # is nothing to do.
    cron(sweep, second=set(range(0, 60, int(delivery.SWEEP_EVERY_S))), unique=True, run_at_startup=True),
    cron(sweep_reminders, second={0}, unique=True, run_at_startup=True),
    cron(sweep_digests, second={0}, unique=True),
]
