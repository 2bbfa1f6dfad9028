"""The worker's pickup: its one-call claim keeps arq's rules (one run per job, nothing early, nothing held twice)."""

from __future__ import annotations

import asyncio
from typing import Any

from arq import func
from arq.connections import ArqRedis
from arq.constants import in_progress_key_prefix

from worker.wakeup import WakeableWorker


def burst_worker(
    arq_pool: ArqRedis, ran: list[str], *, max_jobs: int = 10, idle_poll_s: float = 0.05
) -> WakeableWorker:
    async def note(ctx: dict[str, Any], name: str) -> None:
        await asyncio.sleep(0.01)  # long enough for the other worker to try the same jobs
        ran.append(name)

    return WakeableWorker(
        functions=[func(note, name="note")],
        redis_pool=arq_pool,
        burst=True,
        max_jobs=max_jobs,
        idle_poll_s=idle_poll_s,
        handle_signals=False,
    )


async def test_two_workers_run_each_job_of_a_batch_once(arq_pool: ArqRedis) -> None:
    for number in range(40):
        await arq_pool.enqueue_job("note", f"job-{number}", _job_id=f"j{number}")
    ran: list[str] = []
    first, second = burst_worker(arq_pool, ran, max_jobs=7), burst_worker(arq_pool, ran, max_jobs=7)

    await asyncio.gather(first.async_run(), second.async_run())
    await asyncio.gather(first.close(), second.close())

    assert sorted(ran) == sorted(f"job-{number}" for number in range(40))
    assert first.jobs_complete + second.jobs_complete == 40
    assert first.jobs_complete > 0 and second.jobs_complete > 0  # both took part


async def test_a_held_job_and_a_deferred_one_are_left_alone(arq_pool: ArqRedis) -> None:
    await arq_pool.enqueue_job("note", "held", _job_id="held")
    await arq_pool.enqueue_job("note", "later", _job_id="later", _defer_by=60)
    await arq_pool.enqueue_job("note", "now", _job_id="now")
    await arq_pool.psetex(in_progress_key_prefix + "held", 60_000, b"1")  # another worker runs it
    ran: list[str] = []
    worker = burst_worker(arq_pool, ran)

    await worker.start_jobs([b"held", b"later", b"now", b"gone"])  # "gone" was never enqueued
    await asyncio.gather(*worker.tasks.values())

    assert ran == ["now"]
    assert await arq_pool.exists(in_progress_key_prefix + "later", in_progress_key_prefix + "gone") == 0
    await worker.close()


async def test_no_more_jobs_are_claimed_than_there_are_free_slots(arq_pool: ArqRedis) -> None:
    for number in range(5):
        await arq_pool.enqueue_job("note", f"job-{number}", _job_id=f"j{number}")
    ran: list[str] = []
    worker = burst_worker(arq_pool, ran, max_jobs=2)

    await worker.start_jobs([f"j{number}".encode() for number in range(5)])

    assert sorted(worker.tasks) == ["j0", "j1"] and worker.job_counter == 2
    assert await arq_pool.exists(*(in_progress_key_prefix + f"j{number}" for number in range(2, 5))) == 0
    await asyncio.gather(*worker.tasks.values())
    await worker.close()


async def test_a_full_worker_looks_again_when_a_job_ends_not_at_its_next_idle_poll(arq_pool: ArqRedis) -> None:
    for number in range(3):
        await arq_pool.enqueue_job("note", f"job-{number}", _job_id=f"j{number}")
    ran: list[str] = []
    worker = burst_worker(arq_pool, ran, max_jobs=1, idle_poll_s=5)
    worker.wake()  # the first poll at once; each later one only if a finished job wakes it

    await asyncio.wait_for(worker.async_run(), 3)  # three idle polls would take 10 s
    await worker.close()

    assert sorted(ran) == ["job-0", "job-1", "job-2"]
