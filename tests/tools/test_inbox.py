"""The inbox's one-statement accept: row-level security checks it, and nothing of the household outlives it."""

from __future__ import annotations

import asyncpg
import pytest

from tests.conftest import PostgresInfo
from tools import inbox
from tools.database import Database
from tools.errors import StorageError
from tools.inbox import InboxRow

from . import Family, make_family


async def accept(
    db: Database, family: Family, member: str, external_id: str, **payload: object
) -> tuple[InboxRow, bool]:
    return await inbox.accept(
        db,
        household_id=family.household_id,
        user_id=family.id(member),
        channel="web",
        external_id=external_id,
        text="hi",
        trace_id="t",
        payload=payload or None,
    )


async def test_accept_stores_once_and_leaves_no_household_on_the_connection(
    migrated: PostgresInfo, admin_conn: asyncpg.Connection
) -> None:
    family = await make_family(admin_conn, "Anna")
    db = await Database.connect(migrated.app_dsn, min_size=1, max_size=1)  # one connection: the next use is it
    try:
        first, created = await accept(db, family, "Anna", f"once-{family.household_id}", k=1)
        again, created_again = await accept(db, family, "Anna", f"once-{family.household_id}")
        async with db.pool.acquire() as conn:
            leftover = await conn.fetchval("SELECT current_setting('app.household_id', true)")
            visible = await conn.fetchval("SELECT count(*) FROM inbox")
    finally:
        await db.close()
    assert created and not created_again and again.id == first.id and first.payload == {"k": 1}
    assert leftover in (None, "")  # transaction-local: gone with the statement
    assert visible == 0  # without a household the app role sees no inbox row at all
    stored = await admin_conn.fetchrow("SELECT household_id, status FROM inbox WHERE id = $1", first.id)
    assert dict(stored) == {"household_id": family.household_id, "status": "queued"}
    await admin_conn.execute("UPDATE inbox SET status = 'failed' WHERE id = $1", first.id)  # no sweeper picks it


async def test_an_id_taken_in_another_household_is_refused_without_revealing_it(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    ours, theirs = await make_family(admin_conn, "Anna"), await make_family(admin_conn, "Zoe")
    external_id = f"shared-{ours.household_id}"
    row, _ = await accept(db, theirs, "Zoe", external_id)
    with pytest.raises(StorageError, match="already used"):
        await accept(db, ours, "Anna", external_id)
    await admin_conn.execute("UPDATE inbox SET status = 'failed' WHERE id = $1", row.id)
