"""How every FAA process runs: on uvloop where it is installed, with its start-up heap frozen once it serves.

- uvloop's transports and scheduling take less CPU per request than asyncio's selector loop; under a burst of
  webhooks on two cores that is what the last acknowledgement waits for (`bench/webhook_ack.py`).
- A process that has imported aiohttp, aiogram, openai, pydantic and the rest holds ~300k objects that live as
  long as it does. Python's full collection walks them all, and under load the first one came a few bursts after
  start and held every request in flight for ~200 ms. `gc.freeze()` once the process serves moves them out of
  the collector's way; what is allocated later is collected as usual.
- The youngest generation is collected once 50,000 container objects more are alive than at its last collection,
  instead of Python's 700. The requests of a burst hold thousands at once (tasks, futures, requests, responses);
  at 700 the collector ran several times a burst (7 in one instrumented burst of 200), each time walking what the
  requests in flight held, and cost a web process ~20% of its CPU per acknowledgement (`bench/webhook_ack.py`'s
  server: 227-244 against 178-194 µs). At 50,000 none ran in 35 bursts of 100 per process, and the process's
  resident size stayed the same (225 MB).
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
YOUNG_GENERATION = 50_000  # new container objects between collections of the youngest generation (Python: 700)
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
    """Called when the process has started what it serves: collect the start-up garbage, freeze the heap, and
    collect the youngest generation less often.

    Only under `run()`; a test runner that starts web apps and workers again and again keeps its collector as it
    is (frozen objects are never collected)."""
    if _entry_point.get():
        gc.collect()
        gc.freeze()
        gc.set_threshold(YOUNG_GENERATION, *gc.get_threshold()[1:])
        log.info("process.serving", loop=loop_name(), frozen_objects=gc.get_freeze_count())


def loop_name() -> str:
    """The event loop this process runs on ("uvloop" or "asyncio"), for logs and benchmark figures."""
    return type(asyncio.get_running_loop()).__module__.split(".")[0]
