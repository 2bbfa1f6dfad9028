"""GET /metrics: the process's Prometheus metrics plus the queue depth, read from Redis and PostgreSQL at scrape time.

The web process serves it on its own port; a worker process serves it on `METRICS_WORKER_PORT` through
`start_server`. With `METRICS_TOKEN` set, both require `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import asyncio
import hmac
import time
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import structlog
from aiohttp import web
from arq.constants import default_queue_name
from prometheus_client import CONTENT_TYPE_LATEST
from redis.exceptions import RedisError

from engine import metrics
from engine.deps import Deps
from tools.storage import backlog

log = structlog.get_logger()

_READ_TIMEOUT_S = 2.0  # a scrape answers quickly even when a store hangs; the source shows in faa_scrape_errors


async def _queue_jobs(redis: Any) -> dict[str, int]:
    # arq scores each queued job with the time (ms) it may start: later than now means deferred.
    now_ms = int(time.time() * 1000)
    ready = await redis.zcount(default_queue_name, "-inf", now_ms)
    deferred = await redis.zcount(default_queue_name, f"({now_ms}", "+inf")
    return {"ready": int(ready), "deferred": int(deferred)}


async def _backlog(deps: Deps) -> backlog.Backlog:
    async with deps.db.unscoped() as conn:
        return await backlog.read(conn)


async def snapshot(deps: Deps) -> metrics.Snapshot:
    """Read queue depth from Redis and PostgreSQL; a source that fails is reported in the snapshot's errors
    instead of failing the scrape."""
    errors: list[str] = []
    queue: dict[str, int] = {}
    found = backlog.Backlog()
    outbox_pending: int | None = None
    if deps.redis is not None:
        try:
            async with asyncio.timeout(_READ_TIMEOUT_S):
                queue = await _queue_jobs(deps.redis)
        except (RedisError, OSError, TimeoutError) as exc:
            log.warning("metrics.scrape.failed", source="redis", error=type(exc).__name__)
            errors.append("redis")
    try:
        async with asyncio.timeout(_READ_TIMEOUT_S):
            found = await _backlog(deps)
        outbox_pending = found.outbox_pending
    except (asyncpg.PostgresError, OSError, TimeoutError) as exc:
        log.warning("metrics.scrape.failed", source="postgres", error=type(exc).__name__)
        errors.append("postgres")
    return metrics.Snapshot(queue, found.inbox, outbox_pending, tuple(errors))


def _authorised(request: web.Request, token: str) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.encode(), token.encode())


def metrics_handler(deps: Deps) -> Callable[[web.Request], Awaitable[web.Response]]:
    """The GET /metrics handler for `deps`' process."""
    secret = deps.settings.metrics.token
    token = secret.get_secret_value() if secret is not None else None

    async def handle(request: web.Request) -> web.Response:
        if token is not None and not _authorised(request, token):
            raise web.HTTPUnauthorized(headers={"WWW-Authenticate": 'Bearer realm="metrics"'})
        body = metrics.render(await snapshot(deps))
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    return handle


async def _alive(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def start_server(deps: Deps, host: str, port: int) -> web.AppRunner:
    """Serve GET /metrics, and GET /health for a container's liveness check, on their own port (for processes
    without a web API); `cleanup()` the runner to stop."""
    app = web.Application()
    app.add_routes([web.get("/metrics", metrics_handler(deps)), web.get("/health", _alive)])
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    log.info("metrics.server.started", host=host, port=port, addresses=[str(a) for a in runner.addresses])
    return runner
