"""The web process's composition root: the web API and the channels' own listeners, until told to stop."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

import structlog
from aiohttp import web
from arq import create_pool
from arq.connections import RedisSettings

from bot.channels.channel import Listener
from bot.channels.registry import enabled_channels
from bot.web.app import create_app
from engine.composition import close_deps, open_deps
from engine.deps import Deps
from engine.settings import Settings

log = structlog.get_logger()


def web_runner(deps: Deps) -> web.AppRunner:
    """The web API's runner. aiohttp's keep-alive timer starts when a connection opens and runs until a request's
    headers are complete, so it bounds the header read as well as the idle time between requests."""
    return web.AppRunner(create_app(deps), access_log=None, keepalive_timeout=deps.settings.web.idle_timeout_s)


async def serve(
    settings: Settings,
    *,
    stop: asyncio.Event | None = None,
    reuse_port: bool = False,
    listeners: bool = True,
    started: Callable[[], None] | None = None,
) -> None:
    """Run the web API in this process until `stop` is set (or forever); with `listeners` also the enabled
    channels' own servers (email's SMTP receiver). `started` is called once all listen."""
    redis = await create_pool(RedisSettings.from_dsn(settings.redis.url))
    deps = await open_deps(settings, redis=redis)
    runner = web_runner(deps)
    await runner.setup()
    site = web.TCPSite(
        runner, settings.web.host, settings.web.port, backlog=settings.web.backlog, reuse_port=reuse_port or None
    )
    await site.start()
    log.info("web.started", host=settings.web.host, port=settings.web.port, pid=os.getpid())
    running: list[Listener] = []
    try:
        for channel in enabled_channels(settings) if listeners else ():
            listener = channel.listener(deps)
            if listener is not None:
                await listener.start()
                running.append(listener)
        if started is not None:
            started()
        await (stop or asyncio.Event()).wait()
    finally:
        for listener in reversed(running):
            await listener.stop()
        await runner.cleanup()
        await close_deps(deps)
        await redis.aclose()
