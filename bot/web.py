"""The web process's composition root."""

from __future__ import annotations

import asyncio

import structlog
from aiohttp import web
from arq import create_pool
from arq.connections import RedisSettings

from bot.api import create_app
from bot.email.inbound import EmailInbound, Notices
from bot.email.smtp_server import SmtpReceiver
from engine.composition import close_deps, open_deps
from engine.settings import Settings

log = structlog.get_logger()


async def serve(settings: Settings, *, stop: asyncio.Event | None = None) -> None:
    """Run the web API until `stop` is set (or forever)."""
    redis = await create_pool(RedisSettings.from_dsn(settings.redis.url))
    deps = await open_deps(settings, redis=redis)
    runner = web.AppRunner(create_app(deps), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, settings.web.host, settings.web.port, backlog=settings.web.backlog)
    await site.start()
    log.info("web.started", host=settings.web.host, port=settings.web.port)
    smtp = SmtpReceiver(EmailInbound(deps, Notices(deps))) if settings.email.smtp_enabled else None
    try:
        if smtp is not None:
            await smtp.start()
        await (stop or asyncio.Event()).wait()
    finally:
        if smtp is not None:
            await smtp.stop()
        await runner.cleanup()
        await close_deps(deps)
        await redis.aclose()
