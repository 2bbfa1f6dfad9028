"""Delivering outbox rows: one row on its channel's sender, and its retry job when the channel asks for one; a row
delivered to the web app of a member with no page open is followed by push messages (`bot.channels.webpush`)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import structlog
from redis.exceptions import RedisError

from bot.channels import web
from bot.channels.live import Presence
from bot.channels.webpush import CHANNEL as PUSH_CHANNEL
from bot.channels.webpush import pushes
from bot.channels.webpush.pushes import Queued
from engine.deps import Deps
from engine.errors import DeliveryError, StorageError
from tools.infra.queue import DELIVER_OUTBOUND, enqueue_urgent, outbox_job_id
from tools.storage import outbox
from tools.storage.outbox import OutboxRow

log = structlog.get_logger()

# A reply is delivered within a second or its retry is scheduled; the sweeper steps in only after this long.
_OUTBOX_GRACE_S = 30.0
# A row left 'sending' (its process died between handing the reply to the channel and recording it) is sent again
# within RESEND_WINDOW_S (the figure docs/architecture.md states): it becomes due after SENDING_STALE_S, which is
# longer than a channel takes to accept a reply and than recording it keeps trying (`_RECORD_SENT_DELAYS_S`, ~40 s:
# a database restart takes seconds), and the sweep (every SWEEP_EVERY_S) enqueues its job ahead of every waiting
# message (`enqueue_urgent`). It once waited behind a flood of messages in the one FIFO queue: 223 s.
RESEND_WINDOW_S = 90.0
SWEEP_EVERY_S = 15.0
SENDING_STALE_S = RESEND_WINDOW_S - SWEEP_EVERY_S
# Once the channel has the reply, recording it must not fail on a database that is restarting: a row left
# 'sending' is sent again later, which the member would see twice.
_RECORD_SENT_DELAYS_S = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0, 12.0, 12.0)


def backoff(job_try: int, cap: float = 300.0) -> float:
    """Seconds before the next try of a job or delivery that failed `job_try` times."""
    return min(cap, 2.0**job_try)


async def deliver(deps: Deps, outbox_id: int, household_id: int) -> str:
    """Deliver one outbox row on its channel. The row is marked 'sending' (committed) first, so no other worker and
    no sweep sends it meanwhile; then the channel gets it; then it is recorded as sent (or failed)."""
    async with deps.db.household(household_id) as conn:
        row = await outbox.start_sending(conn, outbox_id, stale_after_s=SENDING_STALE_S)
    if row is None:
        return "nothing to deliver"
    sender = deps.senders.get(row.channel)
    try:
        if sender is None:
            raise DeliveryError(f"no sender for channel {row.channel!r}", transient=False)
        await sender.send(row)
    except DeliveryError as exc:
        return await _failed(deps, row, exc)
    pushing = await _pushes_wanted(deps, row)
    queued = await _record_sent(deps, row, pushing=pushing)
    log.info("reply.delivered", channel=row.channel, outbox_id=outbox_id)
    try:
        for push in queued:
            await deliver_later(deps, push.outbox_id, row.household_id, push.not_before or datetime.now(UTC))
    except (RedisError, OSError) as exc:
        log.warning("webpush.enqueue.failed", error=type(exc).__name__)  # queued rows: the outbox sweep sends them
    return "sent"


async def _pushes_wanted(deps: Deps, row: OutboxRow) -> bool:
    """A web app row calls for push messages when the member has no page of the app open (which would show it),
    and push is on at all. Without Redis to ask, no push: the member finds it when they open the app."""
    if row.channel != web.CHANNEL or PUSH_CHANNEL not in deps.senders:
        return False
    try:
        return not await Presence(deps.redis).any_open(row.user_id)
    except (RedisError, OSError) as exc:
        log.warning("webpush.presence.unknown", error=type(exc).__name__)
        return False


async def _failed(deps: Deps, row: OutboxRow, exc: DeliveryError) -> str:
    final = not exc.transient or row.attempts >= deps.settings.worker.delivery_max_attempts
    retry_in = None if final else (exc.retry_after_s or backoff(row.attempts))
    async with deps.db.household(row.household_id) as conn:
        await outbox.mark_attempt_failed(
            conn, row.id, exc.reason, retry_in=None if retry_in is None else timedelta(seconds=retry_in)
        )
    log.warning("reply.delivery.failed", channel=row.channel, permanent=final, attempts=row.attempts)
    if retry_in is None:
        return "failed"
    await enqueue_urgent(
        deps.redis,
        DELIVER_OUTBOUND,
        row.id,
        row.household_id,
        job_id=outbox_job_id(row.id, row.attempts),
        at=datetime.now(UTC) + timedelta(seconds=retry_in),
    )
    return "retrying"


async def _record_sent(deps: Deps, row: OutboxRow, *, pushing: bool) -> list[Queued]:
    """Mark the row sent, with the push messages it calls for queued in the same transaction (so they are queued
    once however often the row is sent), waiting out a database that is briefly unreachable (transient errors
    only)."""
    for delay in _RECORD_SENT_DELAYS_S:
        try:
            return await _mark_sent(deps, row, pushing=pushing)
        except StorageError as exc:
            if not exc.transient:
                log.error("reply.sent.unrecorded", channel=row.channel, outbox_id=row.id, error=exc.reason)
                raise
            log.warning("reply.sent.record_retrying", channel=row.channel, outbox_id=row.id, defer_s=delay)
            await asyncio.sleep(delay)
    try:
        return await _mark_sent(deps, row, pushing=pushing)
    except StorageError as exc:
        log.error("reply.sent.unrecorded", channel=row.channel, outbox_id=row.id, error=exc.reason)
        raise


async def _mark_sent(deps: Deps, row: OutboxRow, *, pushing: bool) -> list[Queued]:
    async with deps.db.household(row.household_id) as conn:
        await outbox.mark_sent(conn, row.id)
        return await pushes.queue_for(conn, row, deps.clock.now()) if pushing else []


async def deliver_later(deps: Deps, outbox_id: int, household_id: int, not_before: datetime) -> None:
    """A delivery job deferred to `not_before` (the end of the member's quiet hours)."""
    await enqueue_urgent(
        deps.redis, DELIVER_OUTBOUND, outbox_id, household_id, job_id=outbox_job_id(outbox_id), at=not_before
    )


async def requeue_due(deps: Deps) -> int:
    """Re-enqueue the delivery of outbox rows that are overdue (a lost job, a crash between answer and send)."""
    async with deps.db.unscoped() as conn:
        due = await outbox.due(conn, _OUTBOX_GRACE_S, SENDING_STALE_S)
    redelivered = 0
    for outbox_id, household_id in due:
        async with deps.db.household(household_id) as conn:
            row = await outbox.get(conn, outbox_id)
        if row is None:
            continue
        redelivered += await enqueue_urgent(
            deps.redis,
            DELIVER_OUTBOUND,
            outbox_id,
            household_id,
            job_id=outbox_job_id(outbox_id, row.attempts) + ":sweep",
        )
    return redelivered
