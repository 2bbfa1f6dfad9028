"""Accepting a message: store it in the inbox (once), then enqueue its job. Never calls the LLM."""

from __future__ import annotations

import time
from typing import Any

import structlog
from redis.exceptions import RedisError

from bot.live import wake_channel
from engine import metrics
from engine.deps import Deps
from tools import inbox
from tools.households import Principal
from tools.inbox import InboxRow

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
    row, created = await inbox.accept(
        deps.db,
        household_id=principal.household_id,
        user_id=principal.user_id,
        channel=channel,
        external_id=external_id,
        text=text,
        trace_id=trace_id,
        payload=payload,
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
    try:
        job = await deps.redis.enqueue_job(HANDLE_JOB, row.id, row.household_id, _job_id=inbox_job_id(row.id))
        if job is not None:
            await deps.redis.publish(wake_channel(deps.redis), b"1")
    except (RedisError, OSError) as exc:
        log.warning("message.enqueue.failed", inbox_id=row.id, error=type(exc).__name__)
