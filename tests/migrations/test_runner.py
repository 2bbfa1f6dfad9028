import asyncio

import asyncpg
import pytest

from migrations.runner import MigrationError, load_migrations, migrate
from tests.conftest import APP_ROLE, EMBEDDING_DIM, PostgresInfo


async def test_migrations_are_idempotent(migrated: PostgresInfo) -> None:
    applied = await migrate(migrated.admin_dsn, embedding_dim=EMBEDDING_DIM, app_role=APP_ROLE)
    assert applied == []


async def test_concurrent_runs_apply_each_migration_once(postgres: PostgresInfo) -> None:
    conn = await asyncpg.connect(postgres.admin_dsn)
    await conn.execute("CREATE DATABASE race")
    await conn.close()
    dsn = postgres.admin_dsn.replace("/postgres?", "/race?")
    results = await asyncio.gather(*(migrate(dsn, embedding_dim=EMBEDDING_DIM, app_role=APP_ROLE) for _ in range(3)))
    names = [name for result in results for name in result]
    assert sorted(names) == sorted(f"{m.version:04d}_{m.name}" for m in load_migrations(EMBEDDING_DIM))


async def test_changing_the_embedding_dimension_is_refused(migrated: PostgresInfo) -> None:
    with pytest.raises(MigrationError, match="re-embed"):
        await migrate(migrated.admin_dsn, embedding_dim=EMBEDDING_DIM + 1, app_role=APP_ROLE)


async def test_bad_role_name_is_refused(migrated: PostgresInfo) -> None:
    with pytest.raises(MigrationError, match="invalid role"):
        await migrate(migrated.admin_dsn, embedding_dim=EMBEDDING_DIM, app_role='x"; drop table users; --')
