"""`faa worker`, and the worker inside `faa up` and `faa chat`, ride out a Redis outage: Redis stopped while a job
runs, then started again empty. The running job finishes, the worker waits for Redis and goes on taking jobs; it
does not exit."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import asyncpg
import pytest
from arq import create_pool
from arq.connections import RedisSettings

from engine.settings import Settings
from tests.e2e.scripts import routed_model, routed_words
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, Scripted
from tests.system import (
    Family,
    System,
    accept_unqueued,
    eventually,
    free_port,
    make_family,
    running_system,
)
from tools.infra.queue import enqueue_message
from worker.main import background_worker, run_worker

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs the redis-server program")


class PrivateRedis:
    """A redis-server of this test's own on a free port, without persistence: stopped, it comes back empty."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=self.workdir,
            stdout=subprocess.DEVNULL,
        )
        pool = await create_pool(RedisSettings.from_dsn(self.url))  # retries until it accepts connections
        await pool.aclose()

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path)
    try:
        yield server
    finally:
        server.stop()


@contextlib.asynccontextmanager
async def faa_worker(settings: Settings) -> AsyncIterator[Callable[[], bool]]:
    """`faa worker`'s loop; yields whether it still runs. Stopped the way `faa up` stops its worker: a cancelled
    loop could be cut between a Redis WATCH and its UNWATCH."""
    stop = asyncio.Event()
    task = asyncio.create_task(run_worker(settings, handle_signals=False, stop=stop))
    try:
        yield lambda: not task.done()
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


@contextlib.asynccontextmanager
async def faa_up_worker(settings: Settings) -> AsyncIterator[Callable[[], bool]]:
    """The worker `faa up` runs beside the web API; alive while the context is open (a dead one takes no jobs,
    which the test sees)."""
    async with background_worker(settings):
        yield lambda: True


@pytest.mark.parametrize("worker_of", [faa_worker, faa_up_worker], ids=["faa worker", "faa up"])
async def test_the_worker_finishes_its_job_waits_for_redis_and_resumes(
    settings: Settings,
    fake_llm: FakeOpenAI,
    admin_conn: asyncpg.Connection,
    private_redis: PrivateRedis,
    worker_of: Callable[[Settings], contextlib.AbstractAsyncContextManager[Callable[[], bool]]],
) -> None:
    await private_redis.start()
    settings = settings.model_copy(update={"redis": settings.redis.model_copy(update={"url": private_redis.url})})
    family = await make_family(admin_conn, f"Outage {worker_of.__name__}", {"Anna": "Europe/Berlin"})
    answering, released = asyncio.Event(), asyncio.Event()

    async def model(request: ChatRequest) -> Scripted:
        if routed_words(request) == "how are you? (before)":
            answering.set()
            await released.wait()
        return routed_model(chat={"reply": "Here I am."})(request)

    fake_llm.script(model)
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system, worker_of(settings) as alive:
        before = await send(system, family, "how are you? (before)")
        await asyncio.wait_for(answering.wait(), 20)

        private_redis.stop()  # Redis goes away while the job runs
        await asyncio.sleep(0.5)  # the worker polls every 20 ms: it meets the outage before the job ends
        released.set()
        await eventually(lambda: finished(admin_conn, before))  # the running job was not cut off
        assert alive()  # waiting for Redis, not exited

        await private_redis.start()  # back, and empty
        after = await send(system, family, "how are you? (after)")
        await eventually(lambda: finished(admin_conn, after), 60)
        assert alive()
    assert await admin_conn.fetchval("SELECT text FROM outbox WHERE inbox_id = $1", before) == "Here I am."


async def send(system: System, family: Family, text: str) -> int:
    row = await accept_unqueued(system.deps, family, "Anna", f"outage-{family.household_id}-{text}", text)
    await enqueue_message(system.deps.redis, row.id, family.household_id)
    return row.id


async def finished(admin_conn: asyncpg.Connection, inbox_id: int) -> bool:
    return bool(await admin_conn.fetchval("SELECT status = 'done' FROM inbox WHERE id = $1", inbox_id))
