"""Accepting a message: store it in the inbox (once), then give its household its turns. Never calls the LLM.

A message gets a job only when it is admitted: its member and its household have a free slot (WORKER_MEMBER_IN_FLIGHT,
WORKER_HOUSEHOLD_IN_FLIGHT). Until then it waits in the inbox, and the message that frees a slot admits the
household's oldest waiting one (`next_turns`, called by the worker too). So arq's queue holds at most a household's
slots of its messages: another household's message is never behind a flood's backlog, whatever its size."""

from __future__ import annotations

import time
from typing import Any

import structlog
from redis.exceptions import RedisError

from engine import metrics
from engine.deps import Deps
from engine.errors import StorageError
from tools.infra.queue import enqueue_admitted
from tools.storage import inbox
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
    """Give the message's household its turns: the message (or an older one of its household) is admitted and
    enqueued when a slot is free, else it waits for its turn. If Redis or PostgreSQL fails here the message is
    still safe in the inbox, waiting: the sweeper gives the household its turns later, so the sender still gets
    its 2xx."""
    assert deps.redis is not None, "a process that accepts messages is built with Redis (open_deps(redis=...))"
    try:
        await next_turns(deps, row.household_id)
    except (RedisError, OSError, StorageError) as exc:
        log.warning("message.enqueue.failed", inbox_id=row.id, error=type(exc).__name__)


async def next_turns(deps: Deps, household_id: int) -> list[int]:
    """Admit the household's oldest waiting messages that fit its free slots and enqueue their jobs; their ids.

    The jobs are enqueued before the admission commits: should Redis fail, the messages stay waiting (the sweep
    gives the turns again) rather than admitted without a job. A job that starts before the commit waits for it at
    its own admission check (the household's admission lock)."""
    ws = deps.settings.worker
    async with deps.db.household(household_id) as conn:
        admitted = await inbox.next_turns(
            conn, household_id, per_member=ws.member_in_flight, per_household=ws.household_in_flight
        )
        for inbox_id in admitted:
            await enqueue_admitted(deps.redis, inbox_id, household_id)
    return admitted
