"""A worker process serves its own GET /metrics on METRICS_WORKER_PORT; a worker inside the web process does not."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiohttp
import asyncpg
import redis.asyncio as redis_asyncio
from arq import Worker

from engine.settings import MetricsSettings, Settings
from tests.e2e.scripts import routed_model
from tests.e2e.test_metrics import Scrape
from tests.fakes.openai_server import FakeOpenAI
from tests.system import make_family, running_system
from worker.main import background_worker, create_worker


@contextlib.asynccontextmanager
async def worker_process(settings: Settings) -> AsyncIterator[Worker]:
    """A worker as `faa worker` builds it, running in this event loop."""
    worker = create_worker(settings, handle_signals=False, serve_metrics=True)
    task = asyncio.create_task(worker.async_run())
    try:
        for _ in range(200):
            if "metrics_server" in worker.ctx or task.done():
                break
            await asyncio.sleep(0.02)
        yield worker
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        # close() cancels the jobs still running (a message another test left, taken by the start-up sweep) and
        # re-raises their CancelledError before it stops the metrics server: let them finish first.
        running = [job for job in worker.tasks.values() if not job.done()]
        if running:
            await asyncio.wait(running, timeout=30)
        await worker.close()


def metrics_url(worker: Worker) -> str:
    host, port = worker.ctx["metrics_server"].addresses[0][:2]
    return f"http://{host}:{port}/metrics"


async def test_the_worker_serves_its_metrics_behind_the_token(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection, redis: redis_asyncio.Redis
) -> None:  # `redis`: the database emptied first, so the worker meets no job another test left queued
    served = settings.model_copy(update={"metrics": MetricsSettings(token="w-token", worker_port=0)})
    family = await make_family(admin_conn, "Worked", {"Anna": "Europe/Berlin"})
    fake_llm.script(routed_model(chat={"reply": "Hi Anna."}))
    async with (
        running_system(served, fake_llm, admin_conn, worker=False) as system,
        worker_process(served) as worker,
        aiohttp.ClientSession() as http,
    ):
        url = metrics_url(worker)
        before = await http.get(url, headers={"Authorization": "Bearer w-token"})
        response = await system.client.post("/v1/messages", json={"text": "how are you?"}, headers=family.auth("Anna"))
        assert (await response.json())["reply"] == "Hi Anna."
        for _ in range(200):  # the worker counts the message just before it delivers the reply
            sent = "SELECT status FROM outbox WHERE household_id = $1 AND text = 'Hi Anna.'"
            if await admin_conn.fetchval(sent, family.household_id) == "sent":
                break
            await asyncio.sleep(0.05)
        after = await http.get(url, headers={"Authorization": "Bearer w-token"})
        refused = await http.get(url)
        alive = await http.get(url.replace("/metrics", "/health"))  # the container's health check, no token

        assert before.status == after.status == 200
        assert refused.status == 401
        assert alive.status == 200
        old, new = Scrape(await before.text()), Scrape(await after.text())
        labels = {"channel": "web", "outcome": "answered"}
        # At least this message: the worker's start-up sweep may also finish a message another test left unfinished
        # in the shared database (the exact count per message is tests/e2e/test_metrics.py's).
        assert new.get("faa_messages_total", **labels) - old.get("faa_messages_total", **labels) >= 1
        # The queue depth is read at scrape time (cron jobs such as the digest sweep come and go in it).
        assert {("faa_queue_jobs", frozenset({("state", state)})) for state in ("ready", "deferred")} <= set(new.values)
    assert "metrics_server" not in worker.ctx  # stopped with the worker


async def test_a_worker_inside_the_web_process_serves_no_metrics_of_its_own(
    settings: Settings, redis: redis_asyncio.Redis
) -> None:
    configured = settings.model_copy(update={"metrics": MetricsSettings(worker_port=0)})
    async with background_worker(configured) as worker:
        for _ in range(200):  # arq records its health only once the startup hook has finished
            if await redis.exists("arq:queue:health-check"):
                break
            await asyncio.sleep(0.02)
        assert await redis.exists("arq:queue:health-check")
        assert "deps" in worker.ctx and "metrics_server" not in worker.ctx
