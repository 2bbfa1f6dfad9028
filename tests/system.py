"""Fixtures for the whole system in one test process: web API over HTTP, an arq worker on the real Redis,
real PostgreSQL, and the scripted OpenAI-compatible server over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer
from arq import Worker, create_pool
from arq.connections import ArqRedis, RedisSettings

from bot.channels import intake
from bot.web.app import create_app
from engine.composition import close_deps, open_deps
from engine.deps import Deps
from engine.settings import (
    DatabaseSettings,
    EmbeddingSettings,
    EngineSettings,
    LLMSettings,
    Settings,
    WebSettings,
    WorkerSettings,
)
from engine.settings import (
    RedisSettings as FAARedisSettings,
)
from tests.conftest import APP_ROLE, EMBEDDING_DIM, PostgresInfo
from tests.fakes.openai_server import ChatRequest, FakeOpenAI
from tools.infra.clock import Clock
from tools.storage import households
from tools.storage.households import Principal
from tools.storage.inbox import InboxRow
from worker.main import background_worker


@pytest.fixture(scope="session")
async def fake_llm() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI(embedding_dim=EMBEDDING_DIM)
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(autouse=True)
async def no_work_left_open(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """What a test leaves queued is settled when it ends: a later test's worker would sweep it up and answer it, and
    that test's count of model calls or deliveries would include another test's message."""
    yield
    if "migrated" not in request.fixturenames:
        return
    if "admin_conn" in request.fixturenames:
        await _settle(request.getfixturevalue("admin_conn"))
        return
    conn = await asyncpg.connect(request.getfixturevalue("migrated").admin_dsn)
    try:
        await _settle(conn)
    finally:
        await conn.close()


async def _settle(admin: asyncpg.Connection) -> None:
    await admin.execute(
        "UPDATE inbox SET status = 'failed', error = 'test over' WHERE status IN ('queued', 'processing')"
    )
    await admin.execute("UPDATE outbox SET status = 'failed' WHERE status IN ('pending', 'sending')")


def make_settings(migrated: PostgresInfo, base_url: str, redis_url: str, **engine: object) -> Settings:
    # The fake embedder is a bag of words: where no cue decides a capability, the (scripted) model chooses.
    engine.setdefault("route_margin", 10.0)
    return Settings(
        database=DatabaseSettings(url=migrated.app_dsn, admin_url=migrated.admin_dsn, app_role=APP_ROLE),
        redis=FAARedisSettings(url=redis_url),
        llm=LLMSettings(base_url=base_url, api_key="test-key", model="scripted", max_retries=0, timeout_s=15),
        embedding=EmbeddingSettings(dim=EMBEDDING_DIM, model="scripted-embed"),
        engine=EngineSettings(**engine),
        worker=WorkerSettings(max_tries=3, lease_s=300, poll_delay_s=0.02),  # quick pickup keeps tests short
        # Tests send bursts from one member (150 hostile messages); the limit has its own test in tests/bot/web.
        web=WebSettings(reply_wait_s=15, messages_per_minute=100_000),
    )


@pytest.fixture
async def settings(migrated: PostgresInfo, fake_llm: FakeOpenAI, redis_url: str, redis: object) -> Settings:
    fake_llm.reset()
    return make_settings(migrated, fake_llm.base_url, redis_url)


@dataclass
class Family:
    household_id: int
    tokens: dict[str, str] = field(default_factory=dict)
    user_ids: dict[str, int] = field(default_factory=dict)

    def auth(self, member: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[member]}"}

    def principal(self, member: str) -> Principal:
        return Principal(self.user_ids[member], self.household_id)


async def accept_unqueued(deps: Deps, family: Family, member: str, external_id: str, text: str) -> InboxRow:
    """A message stored in the inbox whose job was never enqueued: for tests that run or lose the job themselves."""
    row, _ = await intake.accept(
        deps,
        family.principal(member),
        channel="web",
        external_id=external_id,
        text=text,
        trace_id=f"t-{external_id}",
        enqueue=False,
    )
    return row


async def eventually(check: Callable[[], Awaitable[Any]], timeout_s: float = 20.0) -> Any:
    """Wait for the worker: the first truthy result of `check`, or fail after a generous deadline."""
    async with asyncio.timeout(timeout_s):
        while not (result := await check()):
            await asyncio.sleep(0.02)
    return result


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for servers that need a fixed port)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def make_family(admin: asyncpg.Connection, name: str, members: dict[str, str]) -> Family:
    family = Family(await households.create_household(admin, name, "Europe/Berlin"))
    for member, timezone in members.items():
        user_id, token = await households.add_member(admin, family.household_id, member, timezone=timezone)
        family.user_ids[member] = user_id
        family.tokens[member] = token
    return family


@dataclass
class System:
    client: TestClient
    deps: Deps
    redis: ArqRedis
    llm: FakeOpenAI
    admin: asyncpg.Connection
    worker: Worker | None = None


@contextlib.asynccontextmanager
async def running_system(
    settings: Settings,
    fake_llm: FakeOpenAI,
    admin: asyncpg.Connection,
    *,
    worker: bool = True,
    clock: Clock | None = None,
) -> AsyncIterator[System]:
    redis = await create_pool(RedisSettings.from_dsn(settings.redis.url))
    deps = await open_deps(settings, redis=redis, clock=clock)
    client = TestClient(TestServer(create_app(deps)))
    await client.start_server()
    try:
        async with contextlib.AsyncExitStack() as stack:
            running = await stack.enter_async_context(background_worker(settings, clock=clock)) if worker else None
            yield System(client, deps, redis, fake_llm, admin, running)
            await client.close()  # before the worker stops, so no request waits on it
    finally:
        await client.close()
        await close_deps(deps)
        await redis.aclose()


@contextlib.asynccontextmanager
async def routed_system(
    migrated: PostgresInfo,
    fake_llm: FakeOpenAI,
    redis_url: str,
    admin: asyncpg.Connection,
    *,
    clock: Clock | None = None,
    **update: object,
) -> AsyncIterator[System]:
    """The whole system, the scripted model reset; `update` replaces whole settings sections (media, telegram, …)."""
    fake_llm.reset()
    settings = make_settings(migrated, fake_llm.base_url, redis_url)
    async with running_system(settings.model_copy(update=update), fake_llm, admin, clock=clock) as system:
        yield system


def model_calls(system: System, *texts: str) -> list[ChatRequest]:
    """The model calls about these messages: the system's worker may meanwhile answer rows other tests left."""
    return [r for r in system.llm.requests if any(text in json.dumps(r.body, ensure_ascii=False) for text in texts)]


@pytest.fixture
async def system(settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection) -> AsyncIterator[System]:
    async with running_system(settings, fake_llm, admin_conn) as running:
        yield running
