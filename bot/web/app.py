"""The web process's aiohttp app: the family's web app at `/` (`bot.web.pages`), the member API (`bot.web.api`),
every enabled channel's webhook, signed media links, GET /health, GET /metrics and GET /openapi.json."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiohttp import web

from bot.channels.live import ReplyWaiter
from bot.channels.registry import enabled_channels
from bot.web import api
from bot.web.api import DEPS, TOKEN_LOOKUPS, TOKENS, TRACE_ID, WAITER, MessageIn
from bot.web.errors import ApiError, unavailable
from bot.web.media import media_route
from bot.web.metrics import metrics_handler
from bot.web.openapi import document
from bot.web.pages import routes as pages
from bot.web.pages.security import pages_middleware
from bot.web.proxies import forwarded_scheme
from engine.deps import Deps
from tools.errors import FAAError
from tools.storage.database import is_transient

OPENAPI = web.AppKey("openapi", dict)
_RETRY_AFTER_S = 5
log = structlog.get_logger()


@web.middleware
async def _errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    trace_id = request.headers.get("X-Request-ID", "")[:64] or uuid.uuid4().hex
    request[TRACE_ID] = trace_id
    structlog.contextvars.bind_contextvars(trace_id=trace_id)
    try:
        return await handler(request)
    except ApiError:
        raise
    except web.HTTPRequestEntityTooLarge:
        limit = request.app[DEPS].settings.web.max_body_bytes
        raise ApiError(413, "too_large", f"the body is larger than {limit} bytes") from None
    except web.HTTPException as exc:
        raise ApiError(exc.status, exc.reason.lower().replace(" ", "_"), exc.reason) from None
    except Exception as exc:
        if not (isinstance(exc, FAAError) and exc.transient) and not is_transient(exc):
            raise
        # The database (or another peer) is down or restarting: a client that waits and repeats will get through.
        log.warning("web.unavailable", error=type(exc).__name__, path=request.path)
        raise unavailable(_RETRY_AFTER_S) from None
    finally:
        structlog.contextvars.unbind_contextvars("trace_id")


async def health(request: web.Request) -> web.Response:
    deps = request.app[DEPS]
    checks: dict[str, str] = {}
    try:
        async with asyncio.timeout(2):
            await deps.db.ping()
        checks["postgres"] = "ok"
    except Exception as exc:  # any failure at all means unhealthy; the type is reported
        checks["postgres"] = f"error: {type(exc).__name__}"
    try:
        async with asyncio.timeout(2):
            await deps.redis.ping()
        checks["redis"] = "ok"
    except Exception as exc:
        checks["redis"] = f"error: {type(exc).__name__}"
    healthy = all(v == "ok" for v in checks.values())
    return web.json_response({"status": "ok" if healthy else "unhealthy", **checks}, status=200 if healthy else 503)


async def openapi(request: web.Request) -> web.Response:
    return web.json_response(request.app[OPENAPI])


def create_app(deps: Deps) -> web.Application:
    middlewares = [forwarded_scheme(deps.settings.web.trusted_proxies), _errors, pages_middleware]
    app = web.Application(client_max_size=deps.settings.web.max_body_bytes, middlewares=middlewares)
    app[DEPS] = deps
    app[TOKENS] = {}
    app[TOKEN_LOOKUPS] = {}
    app[OPENAPI] = document(MessageIn.model_json_schema())
    app.add_routes(
        [
            *api.ROUTES,
            media_route(deps),
            web.get("/health", health),
            web.get("/metrics", metrics_handler(deps)),
            web.get("/openapi.json", openapi),
        ]
    )
    pages.mount(app, deps)

    async def waiter_context(app: web.Application) -> Any:
        waiter = ReplyWaiter(deps.redis)
        await waiter.start()
        app[WAITER] = waiter
        yield
        await waiter.stop()

    app.cleanup_ctx.append(waiter_context)
    for channel in enabled_channels(deps.settings):
        channel.mount(app, deps)
    return app
