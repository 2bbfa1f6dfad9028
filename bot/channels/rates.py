"""Fixed-window rate limits in Redis: how many times a key may count per window, and how long to wait when over.

If Redis is unreachable the count is let through: losing a family member's message is worse than a burst.
"""

from __future__ import annotations

import math
import time

import structlog
from redis.exceptions import RedisError

from engine.deps import Deps

log = structlog.get_logger()


async def wait_s(deps: Deps, key: str, *, limit: int, window_s: int) -> int | None:
    """Count one for `key` in the current window: None while within `limit`, else the seconds until the window ends
    (at least 1), for a Retry-After."""
    now = time.time()
    window_key = f"{key}:{int(now // window_s)}"
    try:
        count = await deps.redis.incr(window_key)
        if count == 1:
            await deps.redis.expire(window_key, window_s + 1)
    except (RedisError, OSError) as exc:
        log.warning("rate.unchecked", error=type(exc).__name__)
        return None
    if int(count) <= limit:
        return None
    return max(1, math.ceil(window_s - now % window_s))
