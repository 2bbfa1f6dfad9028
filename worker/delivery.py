"""Delivering outbox rows: one row on its channel's sender, and its retry job when the channel asks for one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import structlog

from engine.deps import Deps
from engine.errors import DeliveryError
from tools.infra.queue import DELIVER_OUTBOUND, outbox_job_id
from tools.storage import outbox

log = structlog.get_logger()

# A reply is delivered within a second or its retry is scheduled; the sweeper steps in only after this long.
_OUTBOX_GRACE_S = 30.0


def backoff(job_try: int, cap: float = 300.0) -> float:
    """Seconds before the next try of a job or delivery that failed `job_try` times."""
    return min(cap, 2.0**job_try)


async def deliver(deps: Deps, outbox_id: int, household_id: int) -> str:
    """Deliver one outbox row on its channel; the row lock keeps two workers from sending it twice."""
    max_attempts = deps.settings.worker.delivery_max_attempts
    retry_in: float | None = None
    async with deps.db.household(household_id) as conn:
        row = await outbox.lock_pending(conn, outbox_id)
        if row is None:
            return "nothing to deliver"
        sender = deps.senders.get(row.channel)
        try:
            if sender is None:
                raise DeliveryError(f"no sender for channel {row.channel!r}", transient=False)
            await sender.send(row)
        except DeliveryError as exc:
            final = not exc.transient or row.attempts + 1 >= max_attempts
            retry_in = None if final else (exc.retry_after_s or backoff(row.attempts + 1))
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
        DELIVER_OUTBOUND,
        outbox_id,
        household_id,
        _job_id=outbox_job_id(outbox_id, row.attempts + 1),
        _defer_by=retry_in,
    )
    return "retrying"


async def deliver_later(deps: Deps, outbox_id: int, household_id: int, not_before: datetime) -> None:
    """A delivery job deferred to `not_before` (the end of the member's quiet hours)."""
    await deps.redis.enqueue_job(
        DELIVER_OUTBOUND,
        outbox_id,
        household_id,
        _job_id=outbox_job_id(outbox_id),
        _defer_until=not_before if not_before > datetime.now(UTC) else None,
    )


async def requeue_due(deps: Deps) -> int:
    """Re-enqueue the delivery of outbox rows that are overdue (a lost job, a crash between answer and send)."""
    async with deps.db.unscoped() as conn:
        due = await outbox.due(conn, _OUTBOX_GRACE_S)
    redelivered = 0
    for outbox_id, household_id in due:
        async with deps.db.household(household_id) as conn:
            row = await outbox.get(conn, outbox_id)
        if row is None:
            continue
        job = await deps.redis.enqueue_job(
            DELIVER_OUTBOUND, outbox_id, household_id, _job_id=outbox_job_id(outbox_id, row.attempts) + ":sweep"
        )
        redelivered += job is not None
    return redelivered
