"""Accepting a message: store it in the inbox (once), then enqueue its job. Never calls the LLM."""

from __future__ import annotations

import time
from typing import Any

import structlog
from redis.exceptions import RedisError

from engine import metrics
from engine.deps import Deps
from tools.infra.queue import enqueue_message
from tools.storage.households import Principal
from tools.storage.inbox import InboxRow, NewMessage

log = structlog.get_logger()


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
    if created and enqueue:
        await enqueue_inbound(deps, row)
    _received(channel, row, created, round((time.monotonic() - started) * 1000, 2))
    return row, created


def _received(channel: str, row: InboxRow, created: bool, duration_ms: float) -> None:
    metrics.message_received(channel, duplicate=not created)
    log.info(
        "message.received",
        channel=channel,
        inbox_id=row.id,
        household_id=row.household_id,
        duplicate=not created,
        duration_ms=duration_ms,
    )


async def enqueue_inbound(deps: Deps, row: InboxRow) -> None:
    """Enqueue the message's job. If Redis is unreachable the message is still safe in the inbox: the sweeper
    enqueues it once Redis is back, so the sender still gets its 2xx."""
    assert deps.redis is not None, "a process that accepts messages is built with Redis (open_deps(redis=...))"
    try:
        await enqueue_message(deps.redis, row.id, row.household_id)
    except (RedisError, OSError) as exc:
        log.warning("message.enqueue.failed", inbox_id=row.id, error=type(exc).__name__)
