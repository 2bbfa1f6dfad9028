"""The first run: on a database with no household, `faa up` (and `faa serve`) print one setup link; the web app's
setup page then creates the household and its first adult. Also where the web app's links point."""

from __future__ import annotations

import asyncpg

from bot.ops.runtime import Runtime
from engine.settings import Settings
from tools.storage import web_sessions


def public_base(settings: Settings) -> str:
    """The web app's address for links printed on the command line: MEDIA_BASE_URL when set, else WEB_HOST:WEB_PORT
    (a wildcard host shown as loopback)."""
    if settings.media.base_url:
        return settings.media.base_url.rstrip("/")
    host = settings.web.host
    host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{settings.web.port}"


async def setup_link(runtime: Runtime) -> str | None:
    """A fresh setup link when the database has no household yet (earlier unspent links stop working), else None."""
    conn = await asyncpg.connect(runtime.admin_dsn)
    try:
        async with conn.transaction():
            if not await web_sessions.needs_setup(conn):
                return None
            code = await web_sessions.create_setup_code(conn)
    finally:
        await conn.close()
    return f"{public_base(runtime.settings)}/setup/{code}"
