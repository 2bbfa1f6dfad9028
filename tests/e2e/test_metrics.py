"""GET /metrics after messages went through the whole system: the counters and histograms move by exactly what
happened, queue depth is read at scrape time, and the endpoint can require a token."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import asyncpg
import pytest
from aiohttp.test_utils import TestClient
from arq.connections import ArqRedis
from prometheus_client.parser import text_string_to_metric_families

from bot.web.metrics import snapshot
from engine import metrics
from engine.settings import MetricsSettings, Settings
from tests.conftest import PostgresInfo
from tests.e2e.scripts import routed_model
from tests.fakes.clock import ManualClock
from tests.fakes.openai_server import FakeOpenAI, Scripted
from tests.system import System, make_family, routed_system, running_system
from tools.infra.queue import DELIVER_OUTBOUND

BERLIN = ZoneInfo("Europe/Berlin")


class Scrape:
    """One scrape, parsed with prometheus_client's own text parser."""

    def __init__(self, text: str) -> None:
        self.families = {family.name: family for family in text_string_to_metric_families(text)}
        self.values = {
            (sample.name, frozenset(sample.labels.items())): sample.value
            for family in self.families.values()
            for sample in family.samples
        }

    def get(self, name: str, **labels: str) -> float:
        return self.values.get((name, frozenset(labels.items())), 0.0)


async def scrape(client: TestClient, **headers: str) -> Scrape:
    response = await client.get("/metrics", headers=headers)
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    return Scrape(await response.text())


async def delivered(admin: asyncpg.Connection, inbox_id: int) -> None:
    """Wait until the reply went out: the worker counts a message before it delivers the reply."""
    for _ in range(200):
        if await admin.fetchval("SELECT status FROM outbox WHERE inbox_id = $1", inbox_id) == "sent":
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the reply to message {inbox_id} was never delivered")


async def test_a_recorded_expense_moves_every_counter_by_what_happened(system: System) -> None:
    family = await make_family(system.admin, "Counted", {"Anna": "Europe/Berlin"})
    system.llm.script(routed_model())
    before = await scrape(system.client)

    response = await system.client.post(
        "/v1/messages",
        json={"text": "I spent 12.50 euros on groceries", "client_message_id": "m-1"},
        headers=family.auth("Anna"),
    )
    body = await response.json()
    await delivered(system.admin, body["message_id"])
    again = await system.client.post(
        "/v1/messages",
        json={"text": "I spent 12.50 euros on groceries", "client_message_id": "m-1"},
        headers=family.auth("Anna"),
    )
    after = await scrape(system.client)

    assert "12.50 EUR" in body["reply"] and (await again.json())["duplicate"] is True

    def moved(name: str, **labels: str) -> float:
        return after.get(name, **labels) - before.get(name, **labels)

    assert moved("faa_messages_received_total", channel="web", duplicate="false") == 1
    assert moved("faa_messages_received_total", channel="web", duplicate="true") == 1
    assert moved("faa_messages_total", channel="web", outcome="answered") == 1
    assert moved("faa_message_duration_seconds_count", channel="web", outcome="answered") == 1
    for step in ("preprocess", "experiment", "analyse", "execute", "record"):
        assert moved("faa_step_duration_seconds_count", step=step) == 1, step
        assert moved("faa_step_duration_seconds_bucket", step=step, le="+Inf") == 1, step
    assert moved("faa_step_duration_seconds_count", step="clarify") == 0
    # One LLM call (the expense's answer; the reply is written from the tool's result); its tokens are the ones
    # recorded with the turn.
    turn = await system.admin.fetchrow(
        "SELECT tokens_in, tokens_out, llm_calls FROM interactions WHERE inbox_id = $1", body["message_id"]
    )
    assert turn["llm_calls"] == 1
    kind = "route.expense"
    assert moved("faa_llm_calls_total", model="scripted", kind=kind, result="ok") == 1
    assert moved("faa_llm_call_duration_seconds_count", model="scripted", kind=kind) == 1
    assert moved("faa_llm_tokens_total", model="scripted", kind=kind, direction="prompt") == turn["tokens_in"]
    assert moved("faa_llm_tokens_total", model="scripted", kind=kind, direction="completion") == turn["tokens_out"]
    assert turn["tokens_in"] > 0
    assert moved("faa_tool_calls_total", tool="store", result="ok") == 1
    assert moved("faa_tool_calls_total", tool="store", result="error") == 0
    # The store step embedded the text once: a miss in the worker's cache (the web's cache saw nothing).
    assert moved("faa_embedding_cache_lookups_total", result="miss") == 1
    assert moved("faa_embedding_cache_lookups_total", result="hit") == 0
    hits = after.get("faa_embedding_cache_lookups_total", result="hit")
    lookups = hits + after.get("faa_embedding_cache_lookups_total", result="miss")
    assert after.get("faa_embedding_cache_hit_ratio") == pytest.approx(hits / lookups)


async def test_failed_tools_and_llm_calls_are_counted_apart(
    migrated: PostgresInfo, fake_llm: FakeOpenAI, redis_url: str, redis: object, admin_conn: asyncpg.Connection
) -> None:
    tomorrow = datetime.now(BERLIN).date() + timedelta(days=1)
    clock = ManualClock(datetime(tomorrow.year, tomorrow.month, tomorrow.day, 22, 0, tzinfo=BERLIN))
    async with routed_system(migrated, fake_llm, redis_url, admin_conn, clock=clock) as system:
        family = await make_family(system.admin, "Failing", {"Anna": "Europe/Berlin"})
        system.llm.script(routed_model(reminder={"text": "Give Lea her medicine"}))
        before = await scrape(system.client)
        past = {"text": "remind me at 9 pm today to give Lea her medicine"}  # an hour ago: the tool refuses it
        first = await (await system.client.post("/v1/messages", json=past, headers=family.auth("Anna"))).json()
        await delivered(system.admin, first["message_id"])
        system.llm.script(lambda request: Scripted(content="bad request", status=400))  # not worth a retry
        talk = {"text": "how are you?"}
        second = await (await system.client.post("/v1/messages", json=talk, headers=family.auth("Anna"))).json()
        await delivered(system.admin, second["message_id"])
        after = await scrape(system.client)

    def moved(name: str, **labels: str) -> float:
        return after.get(name, **labels) - before.get(name, **labels)

    assert first["outcome"] == "degraded" and second["outcome"] == "failed"
    # The refusal goes back to the model for one more answer, which here makes the same call again.
    refused = sum(moved("faa_tool_calls_total", tool="schedule_reminder", result=r) for r in ("invalid", "error"))
    assert refused == 2
    assert moved("faa_tool_calls_total", tool="schedule_reminder", result="ok") == 0
    assert moved("faa_llm_calls_total", model="scripted", kind="route.reminder", result="ok") == 1
    assert moved("faa_llm_calls_total", model="scripted", kind="route.reminder.replan", result="ok") == 1
    assert moved("faa_llm_calls_total", model="scripted", kind="route.chat", result="error") == 1
    assert moved("faa_messages_total", channel="web", outcome="degraded") == 1
    assert moved("faa_messages_total", channel="web", outcome="failed") == 1
    assert moved("faa_messages_total", channel="web", outcome="answered") == 0


@pytest.fixture
async def idle_system(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    """The web API with no worker: what is enqueued stays queued."""
    async with running_system(settings, fake_llm, admin_conn, worker=False) as running:
        yield running


async def test_queue_depth_is_read_at_scrape_time(idle_system: System) -> None:
    system = idle_system
    family = await make_family(system.admin, "Queued", {"Anna": "Europe/Berlin"})
    before = await scrape(system.client)
    ids = []
    for text in ("one", "two", "three"):
        response = await system.client.post(
            "/v1/messages", json={"text": text, "wait": False}, headers=family.auth("Anna")
        )
        ids.append((await response.json())["message_id"])
    # Anna's first message is admitted (processing) and has a job; her next two wait for her turn, without one.
    await system.redis.enqueue_job(DELIVER_OUTBOUND, 0, 0, _job_id="later", _defer_by=3600)
    try:
        after = await scrape(system.client)
    finally:
        # Leave nothing queued for later tests' sweepers.
        await system.admin.execute("UPDATE inbox SET status = 'failed', error = 'test over' WHERE id = ANY($1)", ids)

    assert after.get("faa_queue_jobs", state="ready") == 1  # this test's Redis database is its own
    assert after.get("faa_queue_jobs", state="deferred") == 1
    assert after.get("faa_inbox_messages", status="queued") - before.get("faa_inbox_messages", status="queued") == 2
    assert (
        after.get("faa_inbox_messages", status="processing") - before.get("faa_inbox_messages", status="processing")
        == 1
    )
    assert "faa_outbox_pending_messages" in after.families
    assert after.families["faa_scrape_errors"].samples == []


async def test_an_unreachable_store_is_reported_and_the_scrape_still_answers(system: System) -> None:
    gone = ArqRedis(host="127.0.0.1", port=1)
    try:
        taken = await snapshot(dataclasses.replace(system.deps, redis=gone))
    finally:
        await gone.aclose()
    parsed = Scrape(metrics.render(taken).decode())
    assert parsed.get("faa_scrape_errors", source="redis") == 1
    assert parsed.get("faa_scrape_errors", source="postgres") == 0
    assert "faa_inbox_messages" in parsed.families and "faa_messages_received" in parsed.families


async def test_a_metrics_token_is_required_when_set(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    guarded = settings.model_copy(update={"metrics": MetricsSettings(token="s3cret-token")})
    async with running_system(guarded, fake_llm, admin_conn, worker=False) as system:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret-token"}):
            response = await system.client.get("/metrics", headers=headers)
            assert response.status == 401, headers
        assert "faa_messages" in (await scrape(system.client, Authorization="Bearer s3cret-token")).families
