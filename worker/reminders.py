"""Reminders in the worker: fire one occurrence at its time, sweep for whatever is due and unfired (a lost job, a
flushed Redis, a worker that was down), and enqueue one deferred job per occurrence coming due.

Reminders are rows first and jobs second: a job is enqueued only after its row committed, and its id comes from
the reminder and the time it fires, so enqueuing again (a retried message, the sweeper) never makes a second job
for one occurrence. Only reminders due within the look-ahead get a job; the sweeper enqueues the later ones when
their time comes near, so Redis never holds a month of jobs and a Redis flushed ahead of time costs nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import structlog
from arq import Retry
from redis.exceptions import RedisError

from bot.channels.live import announce_household_change
from engine import metrics
from engine.deps import Deps
from tools.infra.queue import FIRE_REMINDER, enqueue_urgent, reminder_job_id
from tools.storage import firings
from tools.storage.firings import Due, Fired
from worker import delivery

log = structlog.get_logger()


def horizon(deps: Deps) -> datetime:
    return deps.clock.now() + timedelta(seconds=deps.settings.reminder.lookahead_s)


async def fire(deps: Deps, reminder_id: int, household_id: int, fire_at: datetime) -> str:
    """Fire one occurrence; nothing when it fired already (the sweeper, another worker) or was changed since."""
    now = deps.clock.now()
    if now < fire_at:
        # Started early (this machine's clock is behind Redis's): come back at the time.
        raise Retry(defer=min((fire_at - now).total_seconds(), deps.settings.reminder.lookahead_s))
    async with deps.db.household(household_id) as conn:
        fired = await firings.fire(conn, reminder_id, now=now, fire_at=fire_at)
    if fired is None:
        return "nothing to fire"
    await _after_firing(deps, fired, now)
    return "fired"


async def sweep(deps: Deps) -> dict[str, int]:
    """Fire what is due and unfired, each in its own household transaction (locked rows are being fired by
    someone else and are skipped); enqueue the jobs of reminders due within the look-ahead."""
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
            await _after_firing(deps, result, now)
    if fired or enqueued:
        log.info("reminder.sweeper.completed", fired=fired, enqueued=enqueued)
    return {"fired": fired, "enqueued": enqueued}


async def _after_firing(deps: Deps, fired: Fired, now: datetime) -> None:
    """Once the firing committed: deliver (or hold until quiet hours end) and enqueue the next occurrence."""
    late_s = (now - fired.fire_at).total_seconds()
    metrics.observe_reminder_lateness(late_s)
    log.info(
        "reminder.fired",
        reminder_id=fired.reminder_id,
        recipients=len(fired.deliveries),
        late_ms=round(late_s * 1000),
        repeats=fired.next_fire_at is not None,
    )
    for item in fired.deliveries:
        if item.not_before is None:
            await delivery.deliver(deps, item.outbox_id, fired.household_id)
        else:
            await delivery.deliver_later(deps, item.outbox_id, fired.household_id, item.not_before)
    await announce_household_change(deps, fired.household_id, "reminders")  # its next time, or it is done
    if fired.next_fire_at is not None and fired.next_fire_at <= horizon(deps):
        await enqueue_fire(deps, Due(fired.reminder_id, fired.household_id, fired.next_fire_at))


async def enqueue_fire(deps: Deps, due: Due) -> bool:
    """A job deferred to the reminder's time; False when that occurrence already has one."""
    # arq defers on the real clock and refuses a deferral more than a day past; a time already past runs at once.
    return await enqueue_urgent(
        deps.redis,
        FIRE_REMINDER,
        due.reminder_id,
        due.household_id,
        due.fire_at.isoformat(),
        job_id=reminder_job_id(due.reminder_id, due.fire_at),
        at=due.fire_at,
    )


async def enqueue_for_message(deps: Deps, inbox_id: int, household_id: int) -> int:
    """After a message committed: jobs for the reminders it scheduled or snoozed that are due soon.

    If Redis is unreachable the reminders are still rows; the sweeper fires them.
    """
    async with deps.db.household(household_id) as conn:
        changed = await firings.changed_by_message(conn, inbox_id)
    soon = horizon(deps)
    enqueued = 0
    try:
        for due in changed:
            if due.fire_at <= soon:
                enqueued += await enqueue_fire(deps, due)
    except (RedisError, OSError) as exc:
        log.warning("reminder.enqueue.failed", error=type(exc).__name__)
    return enqueued
