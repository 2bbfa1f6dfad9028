"""How every FAA process runs its main coroutine: on uvloop, or on asyncio's own loop on Windows, where uvloop
does not build; and, once it serves, with its start-up heap out of the garbage collector's way."""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Coroutine
from contextvars import ContextVar
from typing import Any, TypeVar

import structlog

if sys.platform != "win32":  # as the dependency says
    import uvloop

T = TypeVar("T")
log = structlog.get_logger()

# True in the tasks of a process FAA owns (the `faa` command, a supervised web process), never in a test runner
# that hosts FAA's parts: frozen objects are never collected, and such a runner starts apps again and again.
_own_process: ContextVar[bool] = ContextVar("faa_own_process", default=False)


def run(main: Coroutine[Any, Any, T], *, own_process: bool = False) -> T:
    """The process's main coroutine, as `asyncio.run(main)`, on uvloop where it builds. `own_process`: this
    process is FAA's alone, so `serving()` may freeze its heap."""

    async def entry() -> T:
        _own_process.set(own_process)  # seen by every task the main coroutine starts
        return await main

    if sys.platform == "win32":
        return asyncio.run(entry())
    return uvloop.run(entry())


def serving() -> None:
    """Called once the process has started what it serves (in a process that `run` was told it owns)."""
    if _own_process.get():
        # A full collection walking the ~300k start-up objects stalls every request in flight for 0.3-1 s.
        gc.collect()
        gc.freeze()
        log.info("process.serving", frozen_objects=gc.get_freeze_count())
