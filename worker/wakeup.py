"""A worker that starts a new message's job the moment it is enqueued, not at its next poll of the queue.

arq only polls. The web side publishes on a wake channel after enqueueing (`bot.intake.enqueue_inbound`); this
worker listens and cuts its wait short, so pickup costs a round trip instead of half a poll interval. Deferred jobs
(reminders, retries) are still found by the idle poll, every `idle_poll_s`. A lost wake-up costs only that wait.

It also claims the jobs a poll found in one script call, where arq spends four round trips on each (WATCH, EXISTS,
ZSCORE, MULTI/PSETEX/EXEC): the same checks, atomic in Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import structlog
from arq import Worker
from arq.constants import in_progress_key_prefix
from arq.utils import timestamp_ms
from redis.exceptions import ConnectionError as RedisConnectionError

from tools.infra.queue import wake_channel

log = structlog.get_logger()


class WakeableWorker(Worker):
    def __init__(self, *args: Any, idle_poll_s: float, **kwargs: Any) -> None:
        super().__init__(*args, poll_delay=0, **kwargs)  # the waiting happens in _poll_iteration below
        self._idle_poll_s = idle_poll_s
        self._wake = asyncio.Event()
        self._listener: asyncio.Task[None] | None = None
        self._claim: Any = None  # the script, registered on the worker's pool at first use
        self._slots_full = False

    # arq 0.28 (pinned, maintenance-only) runs this once per loop turn, then sleeps poll_delay (0 here).
    async def _poll_iteration(self) -> None:
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), self._idle_poll_s)
        self._wake.clear()
        await super()._poll_iteration()

    async def start_jobs(self, job_ids: list[bytes]) -> None:
        """Claim due jobs among `job_ids`, as many as there are free slots, and start each in a task, as arq's own
        `start_jobs` does but in one round trip. A job another worker holds, or one re-deferred meanwhile, is
        left alone. When every slot got a job, the first to finish wakes the poll: more may be due."""
        free = self.max_jobs - self.job_counter
        if free <= 0 or not job_ids:
            return
        if self._claim is None:
            self._claim = self.pool.register_script(_CLAIM)
        ids = [job_id.decode() for job_id in job_ids]
        claimed = await self._claim(
            keys=[self.queue_name, *(in_progress_key_prefix + job_id for job_id in ids)],
            args=[timestamp_ms(), int(self.in_progress_timeout_s * 1000), free, *ids],
        )
        self._slots_full = len(claimed) // 2 == free
        for raw_id, score in zip(claimed[::2], claimed[1::2], strict=True):
            await self.sem.acquire()  # never waits: at most `free` jobs were claimed
            self.job_counter += 1
            job_id = raw_id.decode()
            self.tasks[job_id] = self.loop.create_task(self.run_job(job_id, int(float(score))))
            self.tasks[job_id].add_done_callback(self._job_done)

    def _job_done(self, _: asyncio.Task[None]) -> None:
        self._release_sem_dec_counter_on_complete()
        if self._slots_full:
            self._slots_full = False
            self.wake()

    def wake(self) -> None:
        """Run the next poll now (a new job, or time to stop)."""
        self._wake.set()

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        await super().close()

    async def _listen(self) -> None:
        while True:
            pubsub = self.pool.pubsub()
            try:
                await pubsub.subscribe(wake_channel(self.pool))
                async for item in pubsub.listen():
                    if item.get("type") == "message":
                        self.wake()
            except RedisConnectionError:
                log.warning("worker.wakeup.disconnected")  # the idle poll carries on meanwhile
                await asyncio.sleep(1.0)
            finally:
                await pubsub.aclose()


# arq's per-job checks for a batch, atomic: a job is claimed when no worker holds it (its in-progress key) and it is
# still due (its score). KEYS: the queue, then each job's in-progress key; ARGV: now (ms), the in-progress key's
# expiry (ms), the most jobs to claim, then each job id. Returns job id and score, in turn, of each job claimed.
_CLAIM = """
local claimed = {}
for i = 2, #KEYS do
    if #claimed == 2 * tonumber(ARGV[3]) then break end
    if redis.call('EXISTS', KEYS[i]) == 0 then
        local score = redis.call('ZSCORE', KEYS[1], ARGV[i + 2])
        if score and tonumber(score) <= tonumber(ARGV[1]) then
            redis.call('PSETEX', KEYS[i], ARGV[2], '1')
            claimed[#claimed + 1] = ARGV[i + 2]
            claimed[#claimed + 1] = score
        end
    end
end
return claimed
"""
