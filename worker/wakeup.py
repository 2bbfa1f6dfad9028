"""A worker that starts a new message's job the moment it is enqueued, not at its next poll of the queue.

arq only polls. The web side publishes on a wake channel after enqueueing (`bot.intake.enqueue_inbound`); this
worker listens and cuts its wait short, so pickup costs a round trip instead of half a poll interval. Deferred jobs
(reminders, retries) are still found by the idle poll, every `idle_poll_s`. A lost wake-up costs only that wait.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import structlog
from arq import Worker
from redis.exceptions import ConnectionError as RedisConnectionError

from tools.queue import wake_channel

log = structlog.get_logger()


class WakeableWorker(Worker):
    def __init__(self, *args: Any, idle_poll_s: float, **kwargs: Any) -> None:
        super().__init__(*args, poll_delay=0, **kwargs)  # the waiting happens in _poll_iteration below
        self._idle_poll_s = idle_poll_s
        self._wake = asyncio.Event()
        self._listener: asyncio.Task[None] | None = None

    # arq 0.28 (pinned, maintenance-only) runs this once per loop turn, then sleeps poll_delay (0 here).
    async def _poll_iteration(self) -> None:
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), self._idle_poll_s)
        self._wake.clear()
        await super()._poll_iteration()

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
