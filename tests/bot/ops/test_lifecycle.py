"""How FAA's processes run: their main coroutine on uvloop, and once they serve, their start-up heap frozen (never
in a test runner); and the collector's behaviour that freezing relies on."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import weakref
from pathlib import Path

import asyncpg
import pytest

from bot.ops import lifecycle
from engine.settings import Settings
from tests.fakes.openai_server import FakeOpenAI
from tests.system import running_system

REPO = Path(__file__).resolve().parents[3]

_PROCESS = """
import asyncio, gc, json, sys
from bot.ops import lifecycle

async def main():
    before = gc.get_freeze_count()
    lifecycle.serving()
    loop = type(asyncio.get_running_loop()).__module__.split(".")[0]
    return {"loop": loop, "before": before, "after": gc.get_freeze_count()}

print(json.dumps(lifecycle.run(main(), own_process=sys.argv[1] == "own")))
"""


def run_process(kind: str) -> tuple[dict[str, object], str]:
    done = subprocess.run([sys.executable, "-c", _PROCESS, kind], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1]), done.stdout


def test_a_process_of_faa_s_own_serves_on_uvloop_with_its_start_up_heap_frozen() -> None:
    seen, output = run_process("own")
    assert seen["loop"] == "uvloop"
    assert seen["before"] == 0
    assert isinstance(seen["after"], int) and seen["after"] > 10_000  # everything alive once it serves
    assert "process.serving" in output  # logged with the count


async def test_a_process_hosting_faa_keeps_its_collector_as_it_is(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    seen, _ = run_process("hosted")
    assert seen["after"] == 0
    before = gc.get_freeze_count()
    lifecycle.serving()  # here, in the test runner
    async with running_system(settings, fake_llm, admin_conn):  # web app and worker, each with its dependencies
        pass
    assert gc.get_freeze_count() == before


class Node:
    """An object only the cyclic collector can free once it refers to itself."""

    def __init__(self) -> None:
        self.me = self


def test_the_collector_never_examines_frozen_objects() -> None:
    """The library behaviour `serving()` relies on (gc.freeze, Python 3.7+): frozen objects move to a permanent
    generation that no collection walks, so their number no longer adds to a full collection's work; what is
    created later is collected as usual."""
    gc.collect()
    before = gc.get_freeze_count()
    kept = [Node() for _ in range(1000)]
    alive = [weakref.ref(node) for node in kept]
    gc.freeze()
    try:
        assert gc.get_freeze_count() >= before + 1000
        tracked = {id(obj) for obj in gc.get_objects()}  # the objects collections walk, in every generation
        assert not any(id(node) in tracked for node in kept)
        later = Node()
        later_alive = weakref.ref(later)
        del kept, later
        gc.collect()
        assert later_alive() is None  # created after the freeze: collected
        assert all(ref() is not None for ref in alive)  # frozen garbage: never examined, so never freed
    finally:
        gc.unfreeze()
    gc.collect()
    assert all(ref() is None for ref in alive)


def test_run_returns_what_the_main_coroutine_returns_and_raises_what_it_raises() -> None:
    async def answer() -> int:
        return 42

    async def failing() -> None:
        raise LookupError("nothing here")

    assert lifecycle.run(answer()) == 42
    with pytest.raises(LookupError, match="nothing here"):
        lifecycle.run(failing())
