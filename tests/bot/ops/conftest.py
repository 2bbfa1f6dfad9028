"""Fixtures for the `faa` command line: a database of the test's own, the environment an operator would export,
and the command run as the console script runs it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import asyncpg
import pytest
import structlog

from bot.ops.cli import main
from tests.bot.conftest import create_database, drop_database
from tests.conftest import EMBEDDING_DIM, PostgresInfo

Faa = Callable[..., Awaitable[int]]
SECTIONS = tuple(
    f"{name}_"
    for name in "DATABASE REDIS LLM EMBEDDING LOCAL ENGINE WORKER REMINDER WEB MEDIA LOG TELEGRAM THREEMA EMAIL".split()
)


@pytest.fixture
async def database(migrated: PostgresInfo) -> AsyncIterator[PostgresInfo]:
    """An empty database of this test's own: `faa migrate` has something to do, and "Miller" is unique."""
    database = await create_database(migrated, "cli")
    yield database
    await drop_database(migrated, database)


@pytest.fixture
def environment(
    database: PostgresInfo, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> PostgresInfo:
    """What an operator would export, and nothing else: no FAA variable of the outer shell, no `.env` file."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(SECTIONS):
            monkeypatch.delenv(name)
    monkeypatch.setenv("DATABASE_URL", database.app_dsn)
    monkeypatch.setenv("DATABASE_ADMIN_URL", database.admin_dsn)
    monkeypatch.setenv("EMBEDDING_DIM", str(EMBEDDING_DIM))
    monkeypatch.setenv("REDIS_URL", redis_url)
    return database


@pytest.fixture
def faa(environment: PostgresInfo) -> Iterator[Faa]:
    """Run `faa ARGS…` and return its exit code.

    In a thread, because the command calls asyncio.run itself. The command also configures structlog to write to
    the sys.stderr of that moment (capsys's, closed after the test) and to cache each logger on first use: put the
    configuration back, or later tests would log into a closed file. (A logger first used inside a command would
    keep that stream; the commands run here log nothing.)
    """
    saved = structlog.get_config()

    async def run(*argv: str) -> int:
        return await asyncio.to_thread(main, list(argv))

    yield run
    structlog.configure(**saved)


@pytest.fixture
async def admin(environment: PostgresInfo) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(environment.admin_dsn)
    yield conn
    await conn.close()
