"""How every FAA process runs: on uvloop where it is installed, with its start-up heap frozen once it serves.

- uvloop's transports and scheduling take less CPU per request than asyncio's selector loop; under a burst of
  webhooks on two cores that is what the last acknowledgement waits for (`bench/webhook_ack.py`).
- A process that has imported aiohttp, aiogram, openai, pydantic and the rest holds ~300k objects that live as
  long as it does. Python's full collection walks them all, and under load the first one came a few bursts after
  start and held every request in flight for ~200 ms. `gc.freeze()` once the process serves moves them out of
  the collector's way; what is allocated later is collected as usual.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Coroutine
from contextvars import ContextVar
from typing import Any, TypeVar

import structlog

try:
    import uvloop
except ImportError:  # Windows: uvloop does not build there
    uvloop = None  # type: ignore[assignment]

T = TypeVar("T")
log = structlog.get_logger()

# True inside run(): the code runs in one of FAA's own processes, not in a test runner hosting its parts.
_entry_point: ContextVar[bool] = ContextVar("faa_entry_point", default=False)


def run(main: Coroutine[Any, Any, T]) -> T:
    """The process's main coroutine, as `asyncio.run(main)`, on uvloop when it is available."""

    async def entry_point() -> T:
        _entry_point.set(True)  # seen by every task this coroutine starts
        return await main

    return asyncio.run(entry_point()) if uvloop is None else uvloop.run(entry_point())


def serving() -> None:
    """Called when the process has started what it serves: collect the start-up garbage, then freeze the heap.

    Only under `run()`; a test runner that starts web apps and workers again and again keeps its collector as it
    is (frozen objects are never collected)."""
    if _entry_point.get():
        gc.collect()
        gc.freeze()
        log.info("process.serving", loop=loop_name(), frozen_objects=gc.get_freeze_count())


def loop_name() -> str:
    """The event loop this process runs on ("uvloop" or "asyncio"), for logs and benchmark figures."""
    return type(asyncio.get_running_loop()).__module__.split(".")[0]
