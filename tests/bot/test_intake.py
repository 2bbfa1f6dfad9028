"""Enqueueing a message's job in one round trip keeps arq's own rules: one job per id, none after its result."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import cast

from arq import create_pool
from arq.connections import RedisSettings
from arq.jobs import Job, JobStatus

from bot import intake
from bot.live import wake_channel
from engine.deps import Deps
from tools.inbox import InboxRow


def row(inbox_id: int) -> InboxRow:
    return InboxRow(inbox_id, 7, 3, "web", f"x{inbox_id}", "hi", {}, "queued", 0, None, "t", datetime.now(UTC))


async def test_a_job_is_enqueued_once_as_arq_would_and_wakes_the_workers(redis_url: str) -> None:
    pool = await create_pool(RedisSettings.from_dsn(redis_url))
    await pool.flushdb()
    deps = cast(Deps, SimpleNamespace(redis=pool))
    wakes = pool.pubsub()
    await wakes.subscribe(wake_channel(pool))
    try:
        await intake.enqueue_inbound(deps, row(41))
        await intake.enqueue_inbound(deps, row(41))  # a second enqueue of a waiting job adds nothing

        job = Job(intake.inbox_job_id(41), pool)
        info = await job.info()
        assert info is not None and (info.function, info.args) == (intake.HANDLE_JOB, (41, 7))
        assert await job.status() == JobStatus.queued
        assert await pool.zcard(pool.default_queue_name) == 1
        assert 0 < await pool.pttl(f"arq:job:{intake.inbox_job_id(41)}") <= pool.expires_extra_ms

        # While arq keeps the job's result, the same id enqueues nothing either.
        await pool.set(f"arq:result:{intake.inbox_job_id(42)}", b"done")
        await intake.enqueue_inbound(deps, row(42))
        assert await pool.zscore(pool.default_queue_name, intake.inbox_job_id(42)) is None

        heard = []
        for _ in range(5):  # a read that returns None may have consumed the subscription's confirmation
            item = await wakes.get_message(ignore_subscribe_messages=True, timeout=0.1)
            if item is not None:
                heard.append(item["data"])
        assert heard == [b"1"]  # only the job that was enqueued woke the workers
    finally:
        await wakes.aclose()
        await pool.flushdb()
        await pool.aclose()
