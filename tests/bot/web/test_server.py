"""The web process's server: connections that never finish a request are closed."""

from __future__ import annotations

import asyncio
import dataclasses

from aiohttp import web

from bot.web.server import web_runner
from tests.system import System


async def test_a_connection_whose_headers_never_finish_is_closed(system: System) -> None:
    settings = system.deps.settings
    deps = dataclasses.replace(
        system.deps,
        settings=settings.model_copy(update={"web": settings.web.model_copy(update={"idle_timeout_s": 0.2})}),
    )
    runner = web_runner(deps)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /v1/health HTTP/1.1\r\nHost: faa\r\nX-Slow: ")  # the rest never comes
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 30) == b""  # closed by the server, nothing answered
        writer.close()
    finally:
        await runner.cleanup()
