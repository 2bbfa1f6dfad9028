"""How FAA's processes run: their main coroutine on uvloop."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.ops import lifecycle

REPO = Path(__file__).resolve().parents[3]

_PROCESS = """
import asyncio
from bot.ops import lifecycle

async def main():
    return type(asyncio.get_running_loop()).__module__.split(".")[0]

print(lifecycle.run(main()))
"""


def test_a_process_started_by_run_runs_on_uvloop() -> None:
    done = subprocess.run([sys.executable, "-c", _PROCESS], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "uvloop"


def test_run_returns_what_the_main_coroutine_returns_and_raises_what_it_raises() -> None:
    async def answer() -> int:
        return 42

    async def failing() -> None:
        raise LookupError("nothing here")

    assert lifecycle.run(answer()) == 42
    with pytest.raises(LookupError, match="nothing here"):
        lifecycle.run(failing())
