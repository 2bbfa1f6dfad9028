"""Sign-in attempts, counted per client and per code in Redis: past WEB_LOGIN_ATTEMPTS_PER_CLIENT tries from one
address, or WEB_LOGIN_ATTEMPTS_PER_CODE tries of one code, within WEB_LOGIN_WINDOW_S, the sign-in answers 429 with
Retry-After until the window ends. Codes are long enough that guessing is hopeless; the limit also keeps the form
from being a free oracle. Keys carry keyed hashes, never an address or a code."""

from __future__ import annotations

import time

import structlog
from aiohttp import web
from redis.exceptions import RedisError

from bot.channels.pseudonyms import pseudonym
from bot.web.pages.security import DEPS
from bot.web.proxies import client_address
from tools.storage.identities import normalise_code

log = structlog.get_logger()


async def check_login_attempt(request: web.Request, code: str) -> None:
    """Count one sign-in attempt; 429 with Retry-After when the client or the code has used up its window. If
    Redis is unreachable the attempt is let through (as the chat channels' rate limits do)."""
    deps = request.app[DEPS]
    settings = deps.settings.web
    window = settings.login_window_s
    started = int(time.time() // window)
    counters = [
        ("client", client_address(request, settings.trusted_proxies), settings.login_attempts_per_client),
        ("code", normalise_code(code), settings.login_attempts_per_code),
    ]
    for kind, value, limit in counters:
        key = f"faa:web:login:{kind}:{pseudonym(deps.settings, f'login-{kind}', value)}:{started}"
        try:
            count = await deps.redis.incr(key)
            if count == 1:
                await deps.redis.expire(key, window + 1)
        except (RedisError, OSError) as exc:
            log.warning("web.login.rate.unchecked", error=type(exc).__name__)
            return
        if int(count) > limit:
            retry_after = max(1, (started + 1) * window - int(time.time()))
            log.warning("web.login.limited", by=kind)
            raise web.HTTPTooManyRequests(reason="Too many sign-in attempts", headers={"Retry-After": str(retry_after)})
