"""Accepting a message: store it in the inbox (once), then enqueue its job. Never calls the LLM."""

from __future__ import annotations

import time
from typing import Any

import structlog
from arq.constants import job_key_prefix, result_key_prefix
from arq.jobs import serialize_job
from redis.exceptions import RedisError

from bot.live import wake_channel
from engine import metrics
from engine.deps import Deps
from tools.households import Principal
from tools.inbox import InboxRow, NewMessage

log = structlog.get_logger()

HANDLE_JOB = "handle_inbound"


def inbox_job_id(inbox_id: int) -> str:
    return f"inbox:{inbox_id}"


async def accept(
    deps: Deps,
    principal: Principal,
    *,
    channel: str,
    external_id: str,
    text: str,
    trace_id: str,
    payload: dict[str, Any] | None = None,
    enqueue: bool = True,
) -> tuple[InboxRow, bool]:
    """Commit the inbox row, then enqueue; a redelivery finds the row and enqueues nothing new.

    With `enqueue=False` the caller enqueues later (after subscribing to the message's events); a message
    left unqueued by a crash in between is picked up by the sweeper.
    """
    started = time.monotonic()
    row, created = await deps.inbox.accept(
        NewMessage(principal.household_id, principal.user_id, channel, external_id, text, trace_id, payload or {})
    )
    metrics.message_received(channel, duplicate=not created)
    if created and enqueue:
        await enqueue_inbound(deps, row)
    log.info(
        "message.received",
        channel=channel,
        inbox_id=row.id,
        household_id=row.household_id,
        duplicate=not created,
        duration_ms=round((time.monotonic() - started) * 1000, 2),
    )
    return row, created


async def enqueue_inbound(deps: Deps, row: InboxRow) -> None:
    """Enqueue the message's job. If Redis is unreachable the message is still safe in the inbox: the sweeper
    enqueues it once Redis is back, so the sender still gets its 2xx."""
    redis = deps.redis
    job_id = inbox_job_id(row.id)
    enqueued_ms = round(time.time() * 1000)
    job = serialize_job(HANDLE_JOB, (row.id, row.household_id), {}, None, enqueued_ms, serializer=redis.job_serializer)
    try:
        await redis.register_script(_ENQUEUE)(
            keys=[job_key_prefix + job_id, result_key_prefix + job_id, redis.default_queue_name],
            args=[job_id, job, redis.expires_extra_ms, enqueued_ms, wake_channel(redis)],
        )
    except (RedisError, OSError) as exc:
        log.warning("message.enqueue.failed", inbox_id=row.id, error=type(exc).__name__)


# arq's `enqueue_job` (WATCH the job key, check it and its result, MULTI, PSETEX, ZADD, EXEC), then the wake-up
# that starts an idle worker at once: atomic in one round trip instead of five. A job id still queued or with a
# kept result enqueues nothing, as with arq.
_ENQUEUE = """
if redis.call('EXISTS', KEYS[1], KEYS[2]) > 0 then return 0 end
redis.call('PSETEX', KEYS[1], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
redis.call('PUBLISH', ARGV[5], '1')
return 1
"""
