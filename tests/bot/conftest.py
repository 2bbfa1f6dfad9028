"""Fixtures for the terminal side: a database of its own for each test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from migrations.runner import migrate
from tests.conftest import APP_ROLE, EMBEDDING_DIM, PostgresInfo


def _with_database(dsn: str, name: str) -> str:
    return urlunsplit(urlsplit(dsn)._replace(path=f"/{name}"))


async def create_database(cluster: PostgresInfo, prefix: str) -> PostgresInfo:
    """An empty database in the session's cluster. The app role already exists there (it is cluster-wide)."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(cluster.admin_dsn)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return PostgresInfo(
        admin_dsn=_with_database(cluster.admin_dsn, name), app_dsn=_with_database(cluster.app_dsn, name)
    )


async def drop_database(cluster: PostgresInfo, database: PostgresInfo) -> None:
    name = urlsplit(database.admin_dsn).path.lstrip("/")
    conn = await asyncpg.connect(cluster.admin_dsn)
    try:
        await conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    finally:
        await conn.close()


@pytest.fixture
async def own_database(migrated: PostgresInfo) -> AsyncIterator[PostgresInfo]:
    """A migrated database holding only this test's households (so "the only household" means something)."""
    database = await create_database(migrated, "chat")
    await migrate(database.admin_dsn, embedding_dim=EMBEDDING_DIM, app_role=APP_ROLE)
    yield database
    await drop_database(migrated, database)
