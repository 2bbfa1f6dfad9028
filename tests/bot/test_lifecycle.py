"""How FAA's processes run: on uvloop, with the start-up heap frozen and the young generation collected less often
once they serve (never in a test runner)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot import lifecycle

REPO = Path(__file__).resolve().parents[2]

_PROCESS = """
import gc, json
from bot import lifecycle

async def main():
    before = gc.get_freeze_count()
    lifecycle.serving()
    after, young = gc.get_freeze_count(), gc.get_threshold()[0]
    return {"loop": lifecycle.loop_name(), "before": before, "after": after, "young": young}

print(json.dumps(lifecycle.run(main())))
"""


def test_a_process_started_by_run_serves_on_uvloop_with_its_start_up_heap_frozen() -> None:
    done = subprocess.run([sys.executable, "-c", _PROCESS], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["loop"] == "uvloop"
    assert seen["before"] == 0
    assert seen["after"] > 10_000  # everything alive once the process serves
    assert seen["young"] == lifecycle.YOUNG_GENERATION
    assert "process.serving" in done.stdout  # logged with the loop and the frozen count


async def test_the_test_runner_keeps_its_collector_as_it_is() -> None:
    before, thresholds = gc.get_freeze_count(), gc.get_threshold()
    lifecycle.serving()
    assert gc.get_freeze_count() == before
    assert gc.get_threshold() == thresholds
    assert lifecycle.loop_name() == "asyncio"  # pytest's own loop


def test_run_returns_what_the_main_coroutine_returns_and_raises_what_it_raises() -> None:
    async def answer() -> int:
        return 42

    async def failing() -> None:
        raise LookupError("nothing here")

    assert lifecycle.run(answer()) == 42
    with pytest.raises(LookupError, match="nothing here"):
        lifecycle.run(failing())
