"""The arq queue from the side that accepts messages: job ids, the workers' wake-up, and the enqueue in batches."""

from __future__ import annotations

import time
from typing import Any

from arq.constants import job_key_prefix, result_key_prefix
from arq.jobs import serialize_job

from tools.infra.batching import GroupCommit

HANDLE_JOB = "handle_inbound"


def inbox_job_id(inbox_id: int) -> str:
    return f"inbox:{inbox_id}"


def channel_name(redis: Any, kind: str, key: int | str) -> str:
    # Pub/sub ignores the database number, so it is part of the name: two installs sharing one Redis server
    # on different databases never see each other's replies.
    db = redis.connection_pool.connection_kwargs.get("db", 0)
    return f"faa:{db}:{kind}:{key}"


def wake_channel(redis: Any) -> str:
    """Where the web side says "a job is waiting" so an idle worker starts it now rather than at its next poll."""
    return channel_name(redis, "wake", "jobs")


class InboundQueue:
    """Enqueues each accepted message's job (`handle_inbound(inbox_id, household_id)`) on arq's `ArqRedis`.

    The jobs that wait while an enqueue is under way share the next one (`GroupCommit`): a burst of 200 messages
    costs a few script calls on one connection instead of 200 calls on as many new connections.
    """

    def __init__(self, redis: Any, *, max_batch: int = 500) -> None:
        self._redis = redis
        self._script = redis.register_script(_ENQUEUE)
        self._wake = wake_channel(redis)
        self._commits = GroupCommit(self._enqueue, max_batch=max_batch)

    async def enqueue(self, inbox_id: int, household_id: int) -> bool:
        """Enqueue the message's job; `False` when its job is still queued or has a kept result (as with arq).

        Raises what Redis raises; the message is safe in the inbox either way and the sweeper enqueues it later.
        """
        return await self._commits.submit((inbox_id, household_id))

    async def _enqueue(self, batch: list[tuple[int, int]]) -> list[bool]:
        redis = self._redis
        enqueued_ms = round(time.time() * 1000)
        keys: list[str] = []
        args: list[Any] = [redis.expires_extra_ms, self._wake, enqueued_ms]
        for inbox_id, household_id in batch:
            job_id = inbox_job_id(inbox_id)
            keys += [job_key_prefix + job_id, result_key_prefix + job_id]
            job = serialize_job(
                HANDLE_JOB, (inbox_id, household_id), {}, None, enqueued_ms, serializer=redis.job_serializer
            )
            args += [job_id, job]
        added = await self._script(keys=[*keys, redis.default_queue_name], args=args)
        return [bool(flag) for flag in added]


# arq's `enqueue_job` for each job (WATCH the job key, check it and its result, MULTI, PSETEX, ZADD, EXEC) and one
# wake-up for the batch, atomic in one round trip. A job id still queued or with a kept result enqueues nothing,
# as with arq. KEYS: job key and result key per job, then the queue; ARGV: expiry ms, wake channel, score, then
# job id and serialized job per job.
_ENQUEUE = """
local queue = KEYS[#KEYS]
local added, any = {}, false
for i = 1, (#KEYS - 1) / 2 do
    added[i] = 0
    if redis.call('EXISTS', KEYS[2 * i - 1], KEYS[2 * i]) == 0 then
        redis.call('PSETEX', KEYS[2 * i - 1], ARGV[1], ARGV[2 * i + 3])
        redis.call('ZADD', queue, ARGV[3], ARGV[2 * i + 2])
        added[i], any = 1, true
    end
end
if any then redis.call('PUBLISH', ARGV[2], '1') end
return added
"""
