"""The embedded cluster runs with FAA's own settings, not PostgreSQL's defaults."""

from __future__ import annotations

import asyncpg

from tests.conftest import PostgresInfo
from tools.infra import local_postgres


async def test_the_embedded_cluster_holds_a_household_in_shared_buffers(postgres: PostgresInfo) -> None:
    conn = await asyncpg.connect(postgres.admin_dsn)
    try:
        # The session's cluster was created by local_postgres.start, so it was configured and restarted once.
        assert await conn.fetchval("SHOW shared_buffers") == local_postgres.SHARED_BUFFERS
        assert not await conn.fetchval("SELECT pending_restart FROM pg_settings WHERE name = 'shared_buffers'")
    finally:
        await conn.close()
