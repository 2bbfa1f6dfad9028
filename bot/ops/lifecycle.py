"""How every FAA process runs its main coroutine: on uvloop where it is installed, else on asyncio's own loop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

try:
    import uvloop
except ImportError:  # Windows: uvloop does not build there
    uvloop = None  # type: ignore[assignment]

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """The process's main coroutine, as `asyncio.run(main)`, on uvloop when it is available."""
    return asyncio.run(main) if uvloop is None else uvloop.run(main)
