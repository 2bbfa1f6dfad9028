"""Reminder jobs in the queue: one deferred `fire_reminder` per occurrence, enqueued only after its row committed.

The job id comes from the reminder and the time it fires, so enqueuing again (after a retried message, or
from the sweeper) never makes a second job for one occurrence. Only reminders due within the look-ahead get a
job; the sweeper enqueues the later ones when their time comes near, so Redis never holds a month of jobs and a
Redis flushed ahead of time costs nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import structlog
from redis.exceptions import RedisError

from engine.deps import Deps
from tools.storage import firings
from tools.storage.firings import Due

log = structlog.get_logger()

FIRE_JOB = "fire_reminder"


def reminder_job_id(reminder_id: int, fire_at: datetime) -> str:
    return f"reminder:{reminder_id}:{int(fire_at.timestamp())}"


def horizon(deps: Deps) -> datetime:
    return deps.clock.now() + timedelta(seconds=deps.settings.reminder.lookahead_s)


async def enqueue_fire(deps: Deps, due: Due) -> bool:
    """A job deferred to the reminder's time; False when that occurrence already has one."""
    # arq defers on the real clock and refuses a deferral more than a day past; a time already past runs at once.
    defer_until = due.fire_at if due.fire_at > datetime.now(UTC) else None
    job = await deps.redis.enqueue_job(
        FIRE_JOB,
        due.reminder_id,
        due.household_id,
        due.fire_at.isoformat(),
        _job_id=reminder_job_id(due.reminder_id, due.fire_at),
        _defer_until=defer_until,
    )
    return job is not None


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
