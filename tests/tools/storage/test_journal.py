"""The journal's one-round-trip write (faa_journal_step): scoped to its household like any transaction, once per
step, and nothing of it stays on the pooled connection."""

from __future__ import annotations

import asyncpg
import pytest

from tests.tools import make_family
from tools.storage import journal
from tools.storage.database import Database


async def test_an_entry_written_alone_is_the_households_and_written_once(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    family, other = await make_family(admin_conn, "Anna"), await make_family(admin_conn, "Ben")
    inbox_id = await admin_conn.fetchval(
        # Already done: a queued row would be picked up by a later test's sweeper.
        "INSERT INTO inbox (household_id, user_id, channel, external_id, trace_id, status) "
        "VALUES ($1, $2, 'cli', $3, 't', 'done') RETURNING id",
        family.household_id,
        family.id("Anna"),
        f"journal-{family.household_id}",
    )
    step = {"household_id": family.household_id, "user_id": family.id("Anna"), "inbox_id": inbox_id, "seq": 1}
    await journal.record_alone(db, **step, kind="llm", payload={"response": {"content": "ok"}})
    with pytest.raises(asyncpg.UniqueViolationError):  # a concurrent run that comes second
        await journal.record_alone(db, **step, kind="llm", payload={"response": {"content": "again"}})

    async with db.household(family.household_id) as conn:
        assert (await journal.load(conn, inbox_id))[1].payload == {"response": {"content": "ok"}}
    async with db.household(other.household_id) as conn:
        assert await journal.load(conn, inbox_id) == {}
    for _ in range(db.pool.get_size()):  # the household ended with the function's own transaction
        async with db.pool.acquire() as conn:
            assert not await conn.fetchval("SELECT current_setting('app.household_id', true)")
