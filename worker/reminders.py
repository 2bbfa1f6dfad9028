"""Reminder jobs: fire one occurrence at its time; a sweeper every minute fires whatever is due and unfired
(a lost job, a flushed Redis, a worker that was down) and enqueues the jobs of reminders coming due."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import structlog
from arq import Retry

from engine import metrics
from engine.deps import Deps
from tools.storage import firings
from tools.storage.firings import Fired
from worker.jobs import DELIVER_JOB, deliver_outbound, outbox_job_id
from worker.reminder_queue import enqueue_fire, horizon

log = structlog.get_logger()


async def fire_reminder(ctx: dict[str, Any], reminder_id: int, household_id: int, fire_at: str) -> str:
    """Fire one occurrence; nothing when it fired already (the sweeper, another worker) or was changed since."""
    deps: Deps = ctx["deps"]
    due = datetime.fromisoformat(fire_at)
    now = deps.clock.now()
    if now < due:
        # Started early (this machine's clock is behind Redis's): come back at the time.
        raise Retry(defer=min((due - now).total_seconds(), deps.settings.reminder.lookahead_s))
    structlog.contextvars.bind_contextvars(reminder_id=reminder_id, household_id=household_id)
    try:
        async with deps.db.household(household_id) as conn:
            fired = await firings.fire(conn, reminder_id, now=now, fire_at=due)
        if fired is None:
            return "nothing to fire"
        await _after_firing(ctx, fired, now)
        return "fired"
    finally:
        structlog.contextvars.unbind_contextvars("reminder_id", "household_id")


async def sweep_reminders(ctx: dict[str, Any]) -> dict[str, int]:
    """Fire what is due and unfired, each in its own household transaction (locked rows are being fired by
    someone else and are skipped); enqueue the jobs of reminders due within the look-ahead."""
    deps: Deps = ctx["deps"]
    now = deps.clock.now()
    async with deps.db.unscoped() as conn:
        candidates = await firings.due(conn, horizon(deps), deps.settings.reminder.sweep_batch)
    fired = enqueued = 0
    for due in candidates:
        if due.fire_at > now:
            enqueued += await enqueue_fire(deps, due)
            continue
        async with deps.db.household(due.household_id) as conn:
            result = await firings.fire(conn, due.reminder_id, now=now, skip_locked=True)
        if result is not None:
            fired += 1
            await _after_firing(ctx, result, now)
    if fired or enqueued:
        log.info("reminder.sweeper.completed", fired=fired, enqueued=enqueued)
    return {"fired": fired, "enqueued": enqueued}


async def _after_firing(ctx: dict[str, Any], fired: Fired, now: datetime) -> None:
    """Once the firing committed: deliver (or hold until quiet hours end) and enqueue the next occurrence."""
    deps: Deps = ctx["deps"]
    late_s = (now - fired.fire_at).total_seconds()
    metrics.observe_reminder_lateness(late_s)
    log.info(
        "reminder.fired",
        reminder_id=fired.reminder_id,
        recipients=len(fired.deliveries),
        late_ms=round(late_s * 1000),
        repeats=fired.next_fire_at is not None,
    )
    for delivery in fired.deliveries:
        if delivery.not_before is None:
            await deliver_outbound(ctx, delivery.outbox_id, fired.household_id)
        else:
            await deps.redis.enqueue_job(
                DELIVER_JOB,
                delivery.outbox_id,
                fired.household_id,
                _job_id=outbox_job_id(delivery.outbox_id),
                _defer_until=delivery.not_before if delivery.not_before > datetime.now(UTC) else None,
            )
    if fired.next_fire_at is not None and fired.next_fire_at <= horizon(deps):
        await enqueue_fire(deps, firings.Due(fired.reminder_id, fired.household_id, fired.next_fire_at))
