"""The arq queue: the name of every job and the id it is enqueued under, the enqueue of a message's job, and the
names of the Redis pub/sub channels that carry replies and stream events between processes.

The worker registers its job functions under these names (`worker.jobs`); whatever enqueues a job, in the web
process or in the worker, takes the name and the id from here. An id makes an enqueue idempotent: arq adds no job
while one with the same id is queued or its result is kept.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from arq.constants import in_progress_key_prefix, job_key_prefix

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


async def enqueue_admitted(redis: Any, inbox_id: int, household_id: int) -> bool:
    """Enqueue the job of a message just admitted (only an admitted message has a job, so arq's queue holds at most
    a household's slots of its messages, whatever its backlog): under the message's own id, or under its turn's id
    when a job of it ran before and ended "waiting" (arq keeps that result); `False` when its own job still waits
    in the queue (that job runs it)."""
    if await enqueue_message(redis, inbox_id, household_id):
        return True
    if await redis.exists(job_key_prefix + inbox_job_id(inbox_id)):
        return False
    job = await redis.enqueue_job(HANDLE_INBOUND, inbox_id, household_id, _job_id=f"{inbox_job_id(inbox_id)}:turn")
    return job is not None


async def waits_in_queue(redis: Any, inbox_id: int) -> bool:
    """Whether a job of the message (its own or its turn's) waits in arq's queue, not yet started or deferred to a
    retry: it is not lost, and runs the message when a worker takes it."""
    for job_id in (inbox_job_id(inbox_id), f"{inbox_job_id(inbox_id)}:turn"):
        if await redis.exists(job_key_prefix + job_id) and not await redis.exists(in_progress_key_prefix + job_id):
            return True
    return False


# Reminders, deliveries and digests go ahead of every message waiting to be answered: arq takes the jobs whose
# score (their time) has come in score order, so one that is due now is enqueued as if it had been due an hour ago.
# A job deferred to a later time keeps that time (arq would run it early otherwise) and, once due, goes ahead of the
# messages enqueued after it; a household's flood is mostly refusals of its admission (`worker.messages`), each a
# millisecond, so it waits no longer than a free slot.
URGENT_HEAD_START = timedelta(hours=1)


async def enqueue_urgent(redis: Any, function: str, *args: Any, job_id: str, at: datetime | None = None) -> bool:
    """Enqueue a reminder, delivery or digest job ahead of the waiting messages, or deferred to `at` when that is
    still to come; `False` when a job with this id is queued or has a kept result."""
    now = datetime.now(UTC)
    when = at if at is not None and at > now else now - URGENT_HEAD_START
    job = await redis.enqueue_job(function, *args, _job_id=job_id, _defer_until=when)
    return job is not None


def channel_name(redis: Any, kind: str, key: int | str) -> str:
    # Pub/sub ignores the database number, so it is part of the name: two installs sharing one Redis server
    # on different databases never see each other's replies.
    db = redis.connection_pool.connection_kwargs.get("db", 0)
    return f"faa:{db}:{kind}:{key}"
