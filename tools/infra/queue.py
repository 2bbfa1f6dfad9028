"""The arq queue: the name of every job and the id it is enqueued under, the enqueue of a message's job, and the
names of the Redis pub/sub channels that carry replies and stream events between processes.

The worker registers its job functions under these names (`worker.jobs`); whatever enqueues a job, in the web
process or in the worker, takes the name and the id from here. An id makes an enqueue idempotent: arq adds no job
while one with the same id is queued or its result is kept.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

HANDLE_INBOUND = "handle_inbound"  # answer one inbox message
DELIVER_OUTBOUND = "deliver_outbound"  # deliver one outbox row on its channel
FIRE_REMINDER = "fire_reminder"  # fire one occurrence of a reminder
RUN_DIGEST = "run_digest"  # gather, phrase and send one household's digest for one period


def inbox_job_id(inbox_id: int) -> str:
    return f"inbox:{inbox_id}"


def outbox_job_id(outbox_id: int, attempt: int = 0) -> str:
    return f"outbox:{outbox_id}:{attempt}"


def reminder_job_id(reminder_id: int, fire_at: datetime) -> str:
    return f"reminder:{reminder_id}:{int(fire_at.timestamp())}"


def digest_job_id(household_id: int, kind: str, period_start: date) -> str:
    return f"digest:{household_id}:{kind}:{period_start.isoformat()}"


async def enqueue_message(redis: Any, inbox_id: int, household_id: int) -> bool:
    """Enqueue the message's job on arq's `ArqRedis`; `False` when its job is still queued or has a kept result.

    Raises what Redis raises; the message is safe in the inbox either way and the sweeper enqueues it later.
    """
    job = await redis.enqueue_job(HANDLE_INBOUND, inbox_id, household_id, _job_id=inbox_job_id(inbox_id))
    return job is not None


def channel_name(redis: Any, kind: str, key: int | str) -> str:
    # Pub/sub ignores the database number, so it is part of the name: two installs sharing one Redis server
    # on different databases never see each other's replies.
    db = redis.connection_pool.connection_kwargs.get("db", 0)
    return f"faa:{db}:{kind}:{key}"
