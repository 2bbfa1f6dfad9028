"""The worker's composition root: arq settings, startup (dependencies built once) and shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any

import structlog
from arq import Worker
from arq.connections import ArqRedis, RedisSettings, create_pool
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.exceptions import WatchError

from bot.channels.registry import enabled_channels
from bot.web.metrics import start_server
from engine.capabilities import routing
from engine.composition import close_deps, open_deps
from engine.pipeline import Engine
from engine.settings import Settings
from tools.errors import EmbeddingError
from tools.infra.clock import Clock
from worker.jobs import CRON_JOBS, FUNCTIONS

log = structlog.get_logger()


async def _startup(ctx: dict[str, Any]) -> None:
    settings: Settings = ctx["settings"]
    deps = await open_deps(settings, redis=ctx["redis"], clock=ctx.get("clock"))
    outbound = {channel.name: channel.outbound(deps) for channel in enabled_channels(settings)}
    ctx["channels"] = outbound  # closed on shutdown
    deps = dataclasses.replace(
        deps,
        senders={name: out.sender for name, out in outbound.items() if out.sender is not None},
        fetchers={name: out.fetcher for name, out in outbound.items() if out.fetcher is not None},
    )
    ctx["deps"] = deps
    ctx["engine"] = Engine(deps)
    try:  # the capabilities' examples, embedded before the first message needs them for routing
        await routing.warm(deps.embedder)
    except EmbeddingError as exc:
        log.warning("worker.examples.not_warmed", error=str(exc)[:200])
    warm = getattr(deps.ocr, "warm", None)
    if ctx.get("warm_ocr") and warm is not None:  # photo reading's process loads its models before the first photo
        ctx["ocr_warming"] = asyncio.create_task(warm())
    port = settings.metrics.worker_port
    if ctx.get("serve_metrics") and port is not None:
        ctx["metrics_server"] = await start_server(deps, settings.metrics.worker_host, port)
    if ctx.get("started") is not None:
        ctx["started"]()


async def _shutdown(ctx: dict[str, Any]) -> None:
    warming = ctx.pop("ocr_warming", None)
    if warming is not None:
        warming.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await warming
    server = ctx.pop("metrics_server", None)
    if server is not None:
        await server.cleanup()
    if "deps" in ctx:
        await close_deps(ctx["deps"])
    for out in ctx.pop("channels", {}).values():
        if out.close is not None:
            await out.close()


def create_worker(
    settings: Settings,
    *,
    burst: bool = False,
    redis_pool: ArqRedis | None = None,
    handle_signals: bool = True,
    serve_metrics: bool = False,
    clock: Clock | None = None,
    started: Callable[[], None] | None = None,
    warm_ocr: bool = False,
) -> Worker:
    """An arq worker. `serve_metrics` starts its own GET /metrics when METRICS_WORKER_PORT is set (a worker
    inside the web process needs none: the web API's /metrics shows the same process); `clock` replaces the
    system clock (tests); `started` is called once its dependencies are open; `warm_ocr` starts photo reading's
    process at once (`faa worker`)."""
    ws = settings.worker
    return Worker(
        functions=FUNCTIONS,
        cron_jobs=CRON_JOBS,
        redis_settings=RedisSettings.from_dsn(settings.redis.url),
        redis_pool=redis_pool,
        burst=burst,
        on_startup=_startup,
        on_shutdown=_shutdown,
        ctx={
            "settings": settings,
            "serve_metrics": serve_metrics,
            "clock": clock,
            "started": started,
            "warm_ocr": warm_ocr,
        },
        max_jobs=ws.max_jobs,
        job_timeout=ws.job_timeout_s,
        max_tries=ws.max_tries,
        handle_signals=handle_signals,
        job_completion_wait=30,
        poll_delay=ws.poll_delay_s,
        health_check_interval=30,
    )


# What a lost Redis raises in arq's loop: redis-py's own errors, the socket's, and the WatchError redis-py raises
# when the connection of a transaction that watches a key dies (arq handles a watched key that changed itself).
REDIS_LOST = (RedisConnectionError, RedisTimeoutError, WatchError, OSError)
_RECONNECT_DELAYS_S = (0.5, 1.0, 2.0, 4.0, 8.0)


async def run_worker(
    settings: Settings,
    *,
    serve_metrics: bool = False,
    started: Callable[[], None] | None = None,
    handle_signals: bool = True,
    stop: asyncio.Event | None = None,
) -> None:
    """`faa worker`: an arq worker that rides out a Redis outage instead of exiting with it (`_ride_out`); Redis
    down at start is awaited too. Returns when arq stops (SIGTERM or SIGINT, after letting running jobs finish),
    or once `stop` is set and the running jobs have finished."""

    def make(pool: ArqRedis) -> Worker:
        return create_worker(
            settings,
            redis_pool=pool,
            serve_metrics=serve_metrics,
            started=started,
            handle_signals=handle_signals,
            warm_ocr=True,
        )

    workers = [make(await _connected_pool(settings))]
    stopping = asyncio.create_task(_leave_when(stop, workers)) if stop is not None else None
    try:
        await _ride_out(workers, make)
    except asyncio.CancelledError:
        pass  # SIGTERM or SIGINT: arq cancelled its main task (and re-queued what still ran)
    finally:
        if stopping is not None:
            stopping.cancel()
    await workers[-1].close()  # closes the dependencies (on_shutdown) and the Redis pool


def _leave_loop(worker: Worker) -> None:
    """arq's own way out of its loop: in burst mode with no jobs left to start, it waits for the running jobs and
    returns. Cancelling the loop instead can cut a Redis transaction in half (between WATCH and UNWATCH) and leave
    its pipeline holding a connection."""
    worker.allow_pick_jobs = False
    worker.burst, worker.max_burst_jobs = True, 0


async def _leave_when(stop: asyncio.Event, workers: list[Worker]) -> None:
    await stop.wait()
    _leave_loop(workers[-1])


async def _ride_out(workers: list[Worker], make: Callable[[ArqRedis], Worker]) -> None:
    """Run the last of `workers` until arq returns. When Redis goes away, the running jobs finish (their results
    cannot be kept; the inbox and outbox rows they finished are the truth), the dependencies close, Redis is
    awaited with backoff, and a new worker starts on the same pool; what was lost with Redis the sweep (run at
    start) finds in PostgreSQL."""
    while True:
        worker = workers[-1]
        try:
            await worker.async_run()
            return
        except REDIS_LOST as exc:
            log.warning("worker.redis.lost", error=type(exc).__name__, running_jobs=len(worker.tasks))
            await _wind_down(worker)
            await _redis_back(worker.pool)
            log.info("worker.redis.back")
            workers.append(make(worker.pool))


async def _wind_down(worker: Worker) -> None:
    """Let the running jobs finish (each fails only at storing its result in Redis), then close what startup
    opened. arq's own close() would stop at the first job's Redis error, before its shutdown hook."""
    await asyncio.gather(*worker.tasks.values(), return_exceptions=True)
    await _shutdown(worker.ctx)


async def _connected_pool(settings: Settings) -> ArqRedis:
    attempt = 0
    while True:
        try:
            return await create_pool(RedisSettings.from_dsn(settings.redis.url))
        except REDIS_LOST as exc:
            delay = _RECONNECT_DELAYS_S[min(attempt, len(_RECONNECT_DELAYS_S) - 1)]
            log.warning("worker.redis.unreachable", error=type(exc).__name__, retry_in_s=delay)
            await asyncio.sleep(delay)
            attempt += 1


async def _redis_back(pool: ArqRedis) -> None:
    """Wait until Redis answers again, with backoff (redis-py's pool makes new connections by itself)."""
    for attempt in itertools.count():
        delay = _RECONNECT_DELAYS_S[min(attempt, len(_RECONNECT_DELAYS_S) - 1)]
        await asyncio.sleep(delay)
        try:
            await pool.ping()
            return
        except REDIS_LOST as exc:
            log.warning("worker.redis.unreachable", error=type(exc).__name__, retry_in_s=delay)


@contextlib.asynccontextmanager
async def background_worker(
    settings: Settings, *, grace_s: float = 10.0, clock: Clock | None = None
) -> AsyncIterator[Worker]:
    """A worker running in this process's event loop (`faa up`, `faa chat`), riding out Redis outages like
    `faa worker`. On exit it stops taking jobs, gives running ones `grace_s` to finish (the rest are cancelled;
    arq re-queues them), and closes its dependencies. Yields the first worker (tests read its counters)."""

    def make(pool: ArqRedis) -> Worker:
        return create_worker(settings, redis_pool=pool, handle_signals=False, clock=clock)

    workers = [make(await _connected_pool(settings))]
    task = asyncio.create_task(_ride_out(workers, make))
    try:
        yield workers[0]
    finally:
        _leave_loop(workers[-1])
        done, _ = await asyncio.wait({task}, timeout=grace_s)
        if not done:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        try:
            await workers[-1].close()
        except asyncio.CancelledError:
            # close() re-raises the cancellation of a job that outlived the grace period, before its shutdown hook.
            await _shutdown(workers[-1].ctx)
