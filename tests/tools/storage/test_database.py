"""The one way into the data: `Database.household` opens a transaction with the household set (one round trip),
commits it, and rolls it back on any error, cancellation included."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import pytest

from tests.tools import make_family
from tools.errors import StorageError
from tools.storage.database import Database, storable_text


async def _note_count(admin_conn: asyncpg.Connection, household_id: int) -> int:
    return await admin_conn.fetchval("SELECT count(*) FROM memories WHERE household_id = $1", household_id)


async def _add_note(conn: asyncpg.Connection, household_id: int, user_id: int) -> None:
    await conn.execute(
        "INSERT INTO memories (household_id, author_id, content) VALUES ($1, $2, 'a note')", household_id, user_id
    )


async def test_the_transaction_sees_its_household_and_commits(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna")
    async with db.household(family.household_id, family.id("Anna")) as conn:
        assert conn.is_in_transaction()
        settings = await conn.fetchrow(
            "SELECT current_setting('app.household_id') AS household, current_setting('app.user_id') AS member, "
            "current_setting('synchronous_commit') AS sync"
        )
        assert tuple(settings) == (str(family.household_id), str(family.id("Anna")), "on")
        await _add_note(conn, family.household_id, family.id("Anna"))
    assert await _note_count(admin_conn, family.household_id) == 1
    async with db.household(family.household_id, durable=False) as conn:  # a step the job's last commit covers
        assert await conn.fetchval("SELECT current_setting('synchronous_commit')") == "off"
        assert await conn.fetchval("SELECT current_setting('app.user_id')") == ""


@pytest.mark.parametrize("interruption", ["error", "cancel"])
async def test_an_error_or_a_cancellation_rolls_back(
    db: Database, admin_conn: asyncpg.Connection, interruption: str
) -> None:
    family = await make_family(admin_conn, "Anna")
    inside = asyncio.Event()

    async def write_then_stop() -> None:
        async with db.household(family.household_id, family.id("Anna")) as conn:
            await _add_note(conn, family.household_id, family.id("Anna"))
            if interruption == "error":
                raise LookupError("the step failed after its write")
            inside.set()
            await asyncio.sleep(30)

    task = asyncio.create_task(write_then_stop())
    if interruption == "cancel":
        await inside.wait()
        task.cancel()
    with pytest.raises(LookupError if interruption == "error" else asyncio.CancelledError):
        await task
    assert await _note_count(admin_conn, family.household_id) == 0
    # The pool's connections come back clean: none is left inside the rolled-back transaction.
    for _ in range(db.pool.get_size()):
        async with db.household(family.household_id) as conn:
            assert await conn.fetchval("SELECT count(*) FROM memories") == 0


async def test_a_statement_timeout_leaves_as_a_transient_storage_error(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    family = await make_family(admin_conn, "Anna")
    with pytest.raises(StorageError) as caught:
        async with db.household(family.household_id) as conn:
            await conn.execute("SET LOCAL statement_timeout = '50ms'")
            await conn.execute("SELECT pg_sleep(5)")
    assert caught.value.transient and caught.value.sqlstate == "57014"
    assert isinstance(caught.value.__cause__, asyncpg.QueryCanceledError)


@pytest.mark.parametrize("pause_s", [0, 0.001, 0.1])
async def test_a_dropped_connection_leaves_as_a_transient_storage_error_and_the_pool_recovers(
    db: Database, admin_conn: asyncpg.Connection, pause_s: float
) -> None:
    """The server drops the connection between two statements; the next one fails however far the client got in
    noticing (its error differs with the pause)."""
    family = await make_family(admin_conn, "Anna")
    with pytest.raises(StorageError) as caught:
        async with db.household(family.household_id, family.id("Anna")) as conn:
            await _add_note(conn, family.household_id, family.id("Anna"))
            pid = await conn.fetchval("SELECT pg_backend_pid()")
            assert await admin_conn.fetchval("SELECT pg_terminate_backend($1)", pid)
            await asyncio.sleep(pause_s)
            await conn.fetchval("SELECT 1")
    assert caught.value.transient
    assert await _note_count(admin_conn, family.household_id) == 0
    for _ in range(db.pool.get_size()):
        async with db.household(family.household_id) as conn:
            assert await conn.fetchval("SELECT 1") == 1


async def test_what_time_cannot_fix_stays_the_drivers(db: Database, admin_conn: asyncpg.Connection) -> None:
    """Data the database refuses is a fact about the query, for the code that ran it to handle."""
    family = await make_family(admin_conn, "Anna")
    with pytest.raises(asyncpg.DivisionByZeroError):
        async with db.household(family.household_id) as conn:
            await conn.fetchval("SELECT 1 / $1::int", 0)


async def test_text_postgres_cannot_hold_is_made_storable_on_the_way_in(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    """PostgreSQL refuses NUL in text and jsonb, and UTF-8 has no lone surrogates: a model's reply or a tool's
    trace with either must not fail the write that records it."""
    family = await make_family(admin_conn, "Anna")
    async with db.household(family.household_id, family.id("Anna")) as conn:
        memory_id = await conn.fetchval(
            "INSERT INTO memories (household_id, author_id, content, ai_understanding) VALUES ($1, $2, $3, $4) "
            "RETURNING id",
            family.household_id,
            family.id("Anna"),
            "nul\x00 and \ud800 alone",
            {"k\x00": ["v\x00", "\udc00", "\ud83d\ude00", "\\u0000 stays text"]},
        )
    row = await admin_conn.fetchrow(
        "SELECT content, ai_understanding::text AS doc FROM memories WHERE id = $1", memory_id
    )
    assert row["content"] == "nul and \ufffd alone"
    assert json.loads(row["doc"]) == {"k": ["v", "\ufffd", "😀", "\\u0000 stays text"]}


@pytest.mark.parametrize(
    ("value", "stored"),
    [("plain", "plain"), ("a\x00b", "ab"), ("\ud800x", "\ufffdx"), ("\ud83d\ude00", "😀"), ("日本\x00", "日本")],
)
def test_storable_text(value: str, stored: str) -> None:
    assert storable_text(value) == stored
