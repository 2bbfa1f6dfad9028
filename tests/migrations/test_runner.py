import asyncio

import asyncpg
import pytest

from migrations.runner import MigrationError, apply, load_migrations, migrate
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


async def test_a_question_waiting_before_0024_keeps_its_chat_and_a_second_chat_keeps_its_own(
    postgres: PostgresInfo,
) -> None:
    conn = await asyncpg.connect(postgres.admin_dsn)
    await conn.execute("CREATE DATABASE pending_upgrade")
    await conn.close()
    conn = await asyncpg.connect(postgres.admin_dsn.replace("/postgres?", "/pending_upgrade?"))
    try:
        migrations = load_migrations(EMBEDDING_DIM)
        await apply(conn, [m for m in migrations if m.version < 24])
        household = await conn.fetchval("INSERT INTO households (name) VALUES ('Upgrade') RETURNING id")
        user = await conn.fetchval("INSERT INTO users (household_id, name) VALUES ($1, 'Anna') RETURNING id", household)
        inbox = await conn.fetchval(
            """INSERT INTO inbox (household_id, user_id, channel, external_id, trace_id)
               VALUES ($1, $2, 'telegram', '1', 't') RETURNING id""",
            household,
            user,
        )
        await conn.execute(
            """INSERT INTO pending_clarifications (household_id, user_id, inbox_id, question, state)
               VALUES ($1, $2, $3, 'When?', '{"chat": "telegram:private", "text": "remind me"}')""",
            household,
            user,
            inbox,
        )

        await apply(conn, migrations)

        kept = await conn.fetchrow("SELECT chat, state::text AS state FROM pending_clarifications")
        assert (kept["chat"], kept["state"]) == ("telegram:private", '{"text": "remind me"}')
        await conn.execute(
            """INSERT INTO pending_clarifications (household_id, user_id, chat, inbox_id, question)
               VALUES ($1, $2, 'telegram:group', $3, 'What do you mean?')""",
            household,
            user,
            inbox,
        )
        assert await conn.fetchval("SELECT count(*) FROM pending_clarifications WHERE user_id = $1", user) == 2
    finally:
        await conn.close()
