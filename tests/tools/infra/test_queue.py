"""Enqueueing messages' jobs in batches keeps arq's own rules: one job per id, none after its result."""

from __future__ import annotations

import asyncio

from arq.connections import ArqRedis
from arq.jobs import Job, JobStatus
from redis.exceptions import ConnectionError as RedisConnectionError

from tools.infra.queue import HANDLE_JOB, InboundQueue, inbox_job_id, wake_channel


async def wakes_heard(pubsub: object, reads: int = 5) -> list[bytes]:
    heard = []
    for _ in range(reads):  # a read that returns None may have consumed the subscription's confirmation
        item = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.1)  # type: ignore[attr-defined]
        if item is not None:
            heard.append(item["data"])
    return heard


async def test_a_job_is_enqueued_once_as_arq_would_and_wakes_the_workers(arq_pool: ArqRedis) -> None:
    queue = InboundQueue(arq_pool)
    wakes = arq_pool.pubsub()
    await wakes.subscribe(wake_channel(arq_pool))
    try:
        assert await queue.enqueue(41, 7)
        assert not await queue.enqueue(41, 7)  # a second enqueue of a waiting job adds nothing

        job = Job(inbox_job_id(41), arq_pool)
        info = await job.info()
        assert info is not None and (info.function, info.args) == (HANDLE_JOB, (41, 7))
        assert await job.status() == JobStatus.queued
        assert await arq_pool.zcard(arq_pool.default_queue_name) == 1
        assert 0 < await arq_pool.pttl(f"arq:job:{inbox_job_id(41)}") <= arq_pool.expires_extra_ms

        # While arq keeps the job's result, the same id enqueues nothing either.
        await arq_pool.set(f"arq:result:{inbox_job_id(42)}", b"done")
        assert not await queue.enqueue(42, 7)
        assert await arq_pool.zscore(arq_pool.default_queue_name, inbox_job_id(42)) is None

        assert await wakes_heard(wakes) == [b"1"]  # only the job that was enqueued woke the workers
    finally:
        await wakes.aclose()


async def test_jobs_enqueued_at_once_share_a_few_calls_and_each_is_queued_once(arq_pool: ArqRedis) -> None:
    queue = InboundQueue(arq_pool)
    wakes = arq_pool.pubsub()
    await wakes.subscribe(wake_channel(arq_pool))
    try:
        # 100 messages at once, each enqueued twice (a redelivery racing the first delivery).
        added = await asyncio.gather(*(queue.enqueue(100 + n % 100, 3) for n in range(200)))

        assert sum(added) == 100
        assert await arq_pool.zcard(arq_pool.default_queue_name) == 100
        for inbox_id in (100, 150, 199):
            info = await Job(inbox_job_id(inbox_id), arq_pool).info()
            assert info is not None and info.args == (inbox_id, 3)
        # One wake-up per script call: the first message goes alone, the rest share the next call.
        assert 1 <= len(await wakes_heard(wakes)) <= 3
    finally:
        await wakes.aclose()


async def test_an_unreachable_redis_fails_every_waiting_enqueue() -> None:
    gone = ArqRedis(host="127.0.0.1", port=1)
    try:
        queue = InboundQueue(gone)
        outcomes = await asyncio.gather(*(queue.enqueue(n, 1) for n in range(5)), return_exceptions=True)
    finally:
        await gone.aclose()
    assert all(isinstance(outcome, RedisConnectionError) for outcome in outcomes)
