"""Session fixtures: a throwaway PostgreSQL 18 + pgvector cluster and the local Redis, both real."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest
import redis as redis_sync
import redis.asyncio as redis_asyncio
from arq import create_pool
from arq.connections import ArqRedis, RedisSettings

from migrations.runner import migrate
from tools.infra import local_postgres
from tools.storage.database import Database, dsn_with_user

# no test may reach a real model or any other remote host; a push service on loopback for the Web Push tests
pytest_plugins = ["tests.network_guard", "tests.system", "tests.fakes.push_service"]

EMBEDDING_DIM = 64
APP_ROLE = "faa_app"


@dataclass(frozen=True)
class PostgresInfo:
    admin_dsn: str
    app_dsn: str


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresInfo]:
    root = Path(tempfile.mkdtemp(prefix="faa-test-pg-"))
    server = local_postgres.start(root / "data", temporary=True)
    admin_dsn = server.get_uri()
    try:
        yield PostgresInfo(admin_dsn=admin_dsn, app_dsn=dsn_with_user(admin_dsn, APP_ROLE))
    finally:
        server.cleanup()


@pytest.fixture(scope="session")
async def migrated(postgres: PostgresInfo) -> PostgresInfo:
    await migrate(postgres.admin_dsn, embedding_dim=EMBEDDING_DIM, app_role=APP_ROLE)
    return postgres


@pytest.fixture(scope="session")
async def db(migrated: PostgresInfo) -> AsyncIterator[Database]:
    database = await Database.connect(migrated.app_dsn, min_size=1, max_size=8)
    yield database
    await database.close()


@pytest.fixture(scope="session")
async def admin_conn(migrated: PostgresInfo) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(migrated.admin_dsn)
    yield conn
    await conn.close()


_REDIS_DATABASES = range(1, 14)  # 0 is the developer's, 14 and 15 the benchmarks'


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A Redis database of this test run's own: parallel runs on one machine share one Redis server, so each
    claims a free database number with a lease key in database 0 and gives it back at the end."""
    base = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379").rstrip("/")
    registry = redis_sync.Redis.from_url(f"{base}/0")
    token = f"{os.getpid()}-{uuid.uuid4().hex}"
    for number in _REDIS_DATABASES:
        lease = f"faa:test:redis-db:{number}"
        if registry.set(lease, token, nx=True, ex=3600):
            break
    else:
        raise RuntimeError("every test Redis database is leased: too many test runs at once?")
    try:
        yield f"{base}/{number}"
    finally:
        if registry.get(lease) == token.encode():
            registry.delete(lease)
        registry.close()


@pytest.fixture
async def arq_pool(redis_url: str) -> AsyncIterator[ArqRedis]:
    """arq's Redis client on this run's database, emptied before and after."""
    pool = await create_pool(RedisSettings.from_dsn(redis_url))
    await pool.flushdb()
    yield pool
    await pool.flushdb()
    await pool.aclose()


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[redis_asyncio.Redis]:
    client = redis_asyncio.from_url(redis_url)
    await client.flushdb()
    yield client
    await client.flushdb()
    await client.aclose()
