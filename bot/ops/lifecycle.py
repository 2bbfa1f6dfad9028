"""How every FAA process runs its main coroutine: on uvloop, or on asyncio's own loop on Windows, where uvloop
does not build."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

if sys.platform != "win32":  # as the dependency says
    import uvloop

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """The process's main coroutine, as `asyncio.run(main)`, on uvloop where it builds."""
    if sys.platform == "win32":
        return asyncio.run(main)
    return uvloop.run(main)
