"""Where the database comes from: a configured DATABASE_URL, or embedded PostgreSQL started on demand."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
import structlog

from bot.ops.runtime import Runtime, migrate_runtime, resolve
from engine.settings import DatabaseSettings, EmbeddingSettings, Settings
from tests.conftest import APP_ROLE, EMBEDDING_DIM, PostgresInfo


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)  # no `.env` of the checkout in the way
    # Short: the server's Unix socket lives in the data folder, and socket paths are limited to ~100 bytes.
    root = Path(tempfile.mkdtemp(prefix="faa-rt-"))
    yield root / "postgres"
    shutil.rmtree(root, ignore_errors=True)


def embedded_settings(data_dir: Path) -> Settings:
    database = DatabaseSettings(url=None, admin_url=None, app_password=None, app_role=APP_ROLE, data_dir=data_dir)
    return Settings(database=database, embedding=EmbeddingSettings(dim=EMBEDDING_DIM))


async def connected_as(dsn: str) -> str:
    conn = await asyncpg.connect(dsn)
    try:
        return str(await conn.fetchval("SELECT current_user"))
    finally:
        await conn.close()


async def test_without_database_url_embedded_postgres_is_started_and_kept(data_dir: Path) -> None:
    with structlog.testing.capture_logs() as logs:
        runtime = resolve(embedded_settings(data_dir))
    try:
        assert runtime.embedded is not None
        assert [e["event"] for e in logs] == ["database.embedded.started"]
        assert await migrate_runtime(runtime) != []
        assert runtime.settings.database.url is not None
        assert await connected_as(runtime.settings.database.url) == APP_ROLE
        assert await connected_as(runtime.admin_dsn) != APP_ROLE  # the owner migrates and administers
        conn = await asyncpg.connect(runtime.admin_dsn)
        await conn.execute("INSERT INTO households (name) VALUES ('Miller')")
        await conn.close()
    finally:
        runtime.embedded.cleanup()

    # The next `faa` command starts the server again on the same folder: the data is still there.
    again = resolve(embedded_settings(data_dir))
    try:
        assert await migrate_runtime(again) == []
        conn = await asyncpg.connect(again.admin_dsn)
        assert await conn.fetchval("SELECT name FROM households") == "Miller"
        await conn.close()
    finally:
        again.embedded.cleanup()


def test_with_database_url_nothing_is_started(migrated: PostgresInfo) -> None:
    settings = Settings(database=DatabaseSettings(url=migrated.app_dsn, admin_url=None))

    runtime = resolve(settings)

    assert runtime == Runtime(settings)
    assert runtime.admin_dsn == migrated.app_dsn  # without DATABASE_ADMIN_URL the one URL does both jobs
