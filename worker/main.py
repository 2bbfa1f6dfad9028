"""The worker's composition root: arq settings, startup (dependencies built once) and shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

from arq import Worker, cron
from arq.connections import ArqRedis, RedisSettings

from bot.live import LiveReplySender
from bot.threema.fetcher import ThreemaFetcher
from bot.threema.gateway import GatewayClient
from bot.threema.sender import ThreemaSender
from engine.composition import close_deps, open_deps
from engine.deps import DeliveryError, Deps
from engine.pipeline import Engine
from engine.settings import Settings
from tools import media
from worker.jobs import deliver_outbound, handle_inbound, sweep


async def _startup(ctx: dict[str, Any]) -> None:
    settings: Settings = ctx["settings"]
    redis: ArqRedis = ctx["redis"]
    live = LiveReplySender(redis)
    deps = await open_deps(settings, redis=redis, senders={"web": live, "terminal": live})
    if settings.threema.enabled:
        threema = ctx["threema"] = GatewayClient(settings.threema, redis)
        deps = dataclasses.replace(
            deps,
            senders={**deps.senders, "threema": ThreemaSender(threema, _media_loader(deps))},
            fetchers={**deps.fetchers, "threema": ThreemaFetcher(threema)},
        )
    ctx["deps"] = deps
    ctx["engine"] = Engine(deps)


def _media_loader(deps: Deps) -> Any:
    async def load_media(household_id: int, media_id: int) -> tuple[str, bytes]:
        async with deps.db.household(household_id) as conn:
            found = await media.load(conn, media_id)
        if found is None:
            raise DeliveryError(f"media {media_id} is gone", permanent=True)
        return found

    return load_media


async def _shutdown(ctx: dict[str, Any]) -> None:
    if "threema" in ctx:
        await ctx["threema"].close()
    if "deps" in ctx:
        await close_deps(ctx["deps"])


def create_worker(
    settings: Settings, *, burst: bool = False, redis_pool: ArqRedis | None = None, handle_signals: bool = True
) -> Worker:
    ws = settings.worker
    return Worker(
        functions=[handle_inbound, deliver_outbound],
        cron_jobs=[cron(sweep, second={0}, unique=True, run_at_startup=True)],
        redis_settings=RedisSettings.from_dsn(settings.redis.url),
        redis_pool=redis_pool,
        burst=burst,
        on_startup=_startup,
        on_shutdown=_shutdown,
        ctx={"settings": settings},
        max_jobs=ws.max_jobs,
        job_timeout=ws.job_timeout_s,
        max_tries=ws.max_tries,
        handle_signals=handle_signals,
        job_completion_wait=30,
        poll_delay=ws.poll_delay_s,
        health_check_interval=30,
    )


@contextlib.asynccontextmanager
async def background_worker(settings: Settings, *, grace_s: float = 10.0) -> AsyncIterator[Worker]:
    """A worker running in this process's event loop. On exit it stops taking jobs, gives running ones
    `grace_s` to finish (the rest are cancelled; arq re-queues them), and closes its dependencies."""
    worker = create_worker(settings, handle_signals=False)
    task = asyncio.create_task(worker.async_run())
    try:
        yield worker
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        running = [t for t in worker.tasks.values() if not t.done()]
        if running:
            await asyncio.wait(running, timeout=grace_s)
        try:
            await worker.close()
        except asyncio.CancelledError:
            # close() re-raises the cancellation of a job that outlived the grace period, before its shutdown hook.
            await _shutdown(worker.ctx)
