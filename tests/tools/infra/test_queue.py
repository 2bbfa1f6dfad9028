"""Enqueueing a message's job keeps arq's own rules: one job per id, none while its result is kept."""

from __future__ import annotations

from datetime import UTC, date, datetime

from arq.connections import ArqRedis
from arq.jobs import Job, JobStatus

from tools.infra.queue import (
    HANDLE_INBOUND,
    digest_job_id,
    enqueue_message,
    inbox_job_id,
    outbox_job_id,
    reminder_job_id,
)


async def test_a_message_job_is_enqueued_once(arq_pool: ArqRedis) -> None:
    assert await enqueue_message(arq_pool, 41, 7)
    assert not await enqueue_message(arq_pool, 41, 7)  # a second enqueue of a waiting job adds nothing

    job = Job(inbox_job_id(41), arq_pool)
    info = await job.info()
    assert info is not None and (info.function, info.args) == (HANDLE_INBOUND, (41, 7))
    assert await job.status() == JobStatus.queued
    assert await arq_pool.zcard(arq_pool.default_queue_name) == 1


async def test_no_job_is_enqueued_while_its_result_is_kept(arq_pool: ArqRedis) -> None:
    await arq_pool.set(f"arq:result:{inbox_job_id(42)}", b"done")
    assert not await enqueue_message(arq_pool, 42, 7)
    assert await arq_pool.zscore(arq_pool.default_queue_name, inbox_job_id(42)) is None


def test_job_ids_name_what_they_are_for() -> None:
    assert inbox_job_id(5) == "inbox:5"
    assert outbox_job_id(6) == "outbox:6:0" and outbox_job_id(6, 2) == "outbox:6:2"
    assert reminder_job_id(7, datetime(2026, 1, 1, tzinfo=UTC)) == "reminder:7:1767225600"
    assert digest_job_id(8, "monthly", date(2026, 2, 1)) == "digest:8:monthly:2026-02-01"
