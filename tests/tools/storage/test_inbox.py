"""The inbox's group commit: once per key, across households, one bad message failing alone."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import asyncpg
import pytest

from tests.conftest import PostgresInfo
from tests.tools import Family, make_family
from tools.errors import StorageError
from tools.storage import inbox
from tools.storage.database import Database
from tools.storage.inbox import InboxRow, InboxWriter, NewMessage


def message(family: Family, member: str, external_id: str, text: str = "hi", **payload: Any) -> NewMessage:
    return NewMessage(family.household_id, family.id(member), "web", external_id, text, "t", payload)


async def accept(db: Database, family: Family, member: str, external_id: str, **payload: Any) -> tuple[InboxRow, bool]:
    return await InboxWriter(db).accept(message(family, member, external_id, **payload))


async def settle(admin_conn: asyncpg.Connection, household_id: int) -> None:
    """Mark the household's rows failed, so no sweeper of a later test picks them up."""
    await admin_conn.execute("UPDATE inbox SET status = 'failed' WHERE household_id = $1", household_id)


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
    assert again == first  # the row as returned at once is the row as stored
    assert leftover in (None, "")
    assert visible == 0  # without a household the app role sees no inbox row at all
    stored = await admin_conn.fetchrow("SELECT household_id, status FROM inbox WHERE id = $1", first.id)
    assert dict(stored) == {"household_id": family.household_id, "status": "queued"}
    await settle(admin_conn, family.household_id)


async def test_an_id_taken_in_another_household_is_refused_without_revealing_it(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    ours, theirs = await make_family(admin_conn, "Anna"), await make_family(admin_conn, "Zoe")
    external_id = f"shared-{ours.household_id}"
    await accept(db, theirs, "Zoe", external_id)
    with pytest.raises(StorageError, match="already used"):
        await accept(db, ours, "Anna", external_id)
    await settle(admin_conn, theirs.household_id)


async def test_a_burst_across_households_shares_statements_and_keeps_each_key_once(
    db: Database, admin_conn: asyncpg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    anna, zoe = await make_family(admin_conn, "Anna"), await make_family(admin_conn, "Zoe")
    statements = []
    write_many = inbox.write_many

    async def counted(conn: asyncpg.Connection, messages: list[NewMessage]) -> inbox.Written:
        statements.append(len(messages))
        return await write_many(conn, messages)

    monkeypatch.setattr(inbox, "write_many", counted)
    writer = InboxWriter(db)
    # 60 messages at once: 30 keys per household, each key sent twice (a redelivery racing its original).
    burst = [
        message(family, member, f"burst-{family.household_id}-{n}", text=f"{member} {n}")
        for family, member in ((anna, "Anna"), (zoe, "Zoe"))
        for n in range(15)
        for _ in range(2)
    ]
    results = await asyncio.gather(*(writer.accept(m) for m in burst))

    assert sum(created for _, created in results) == 30
    for sent, (row, _) in zip(burst, results, strict=True):
        assert (row.household_id, row.user_id, row.external_id, row.text) == (
            sent.household_id,
            sent.user_id,
            sent.external_id,
            sent.text,
        )
    assert sum(statements) >= 60 and len(statements) < 10  # shared statements, not one per message
    counts = await admin_conn.fetch(
        "SELECT household_id, count(*) FROM inbox WHERE household_id = ANY($1::bigint[]) GROUP BY 1",
        [anna.household_id, zoe.household_id],
    )
    assert {r["household_id"]: r["count"] for r in counts} == {anna.household_id: 15, zoe.household_id: 15}
    await settle(admin_conn, anna.household_id)
    await settle(admin_conn, zoe.household_id)


async def test_a_message_postgres_refuses_fails_alone(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna")
    writer = InboxWriter(db)
    good = [message(family, "Anna", f"good-{family.household_id}-{n}", text="nul\x00byte") for n in range(5)]
    bad = message(family, "Anna", f"bad-{family.household_id}", note=float("nan"))  # not JSON to PostgreSQL
    results = await asyncio.gather(*(writer.accept(m) for m in [*good, bad]), return_exceptions=True)

    assert isinstance(results[-1], asyncpg.PostgresError)
    rows = [result for result in results[:-1] if not isinstance(result, BaseException)]
    assert len(rows) == 5 and all(created and row.text == "nulbyte" for row, created in rows)
    assert await admin_conn.fetchval("SELECT count(*) FROM inbox WHERE household_id = $1", family.household_id) == 5
    await settle(admin_conn, family.household_id)


async def test_the_door_writes_no_row_for_a_member_of_another_household(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    ours, theirs = await make_family(admin_conn, "Anna"), await make_family(admin_conn, "Zoe")
    forged = NewMessage(ours.household_id, theirs.id("Zoe"), "web", f"forged-{ours.household_id}", "hi", "t")
    async with db.pool.acquire() as conn:
        assert await inbox.write_many(conn, [forged]) == {}
    assert await admin_conn.fetchval("SELECT count(*) FROM inbox WHERE external_id = $1", forged.external_id) == 0


async def test_the_table_refuses_a_member_of_another_household_and_goes_with_its_household(
    admin_conn: asyncpg.Connection,
) -> None:
    ours, theirs = await make_family(admin_conn, "Anna"), await make_family(admin_conn, "Zoe")
    insert = "INSERT INTO inbox (household_id, user_id, channel, external_id, trace_id) VALUES ($1, $2, 'web', $3, 't')"
    with pytest.raises(asyncpg.ForeignKeyViolationError):  # even the owner, who passes no door
        await admin_conn.execute(insert, ours.household_id, theirs.id("Zoe"), f"crossed-{ours.household_id}")
    await admin_conn.execute(insert, ours.household_id, ours.id("Anna"), f"kept-{ours.household_id}")

    await admin_conn.execute("DELETE FROM households WHERE id = $1", ours.household_id)
    assert await admin_conn.fetchval("SELECT count(*) FROM inbox WHERE household_id = $1", ours.household_id) == 0


async def test_a_pooled_connections_first_intake_is_one_statement(
    migrated: PostgresInfo, admin_conn: asyncpg.Connection
) -> None:
    """asyncpg looks array types up when a connection first uses them (a catalog query and two JIT switches in the
    middle of the intake's group commit); the connection's set-up has done that already."""
    family = await make_family(admin_conn, "Anna")
    db = await Database.connect(migrated.app_dsn, min_size=1, max_size=1)
    try:
        async with db.pool.acquire() as conn:
            queries: list[str] = []
            conn.add_query_logger(lambda logged: queries.append(logged.query))
            await inbox.write_many(conn, [message(family, "Anna", f"first-{family.household_id}", k=1)])
        assert len(queries) == 1 and "faa_accept_inbox" in queries[0], queries
    finally:
        await db.close()
    await settle(admin_conn, family.household_id)


def _inbox_rows_read(plan: dict[str, Any]) -> int:
    """Rows of `inbox` that the plan's scans produced or filtered away, over all their loops."""
    own = 0
    if plan.get("Relation Name") == "inbox" and "Scan" in plan["Node Type"]:
        loops = plan.get("Actual Loops", 0)
        own = round((plan.get("Actual Rows", 0) + plan.get("Rows Removed by Filter", 0)) * loops)
    return own + sum(_inbox_rows_read(child) for child in plan.get("Plans", []))


async def _rows_read(admin_conn: asyncpg.Connection, sql: str, *args: Any) -> int:
    """EXPLAIN ANALYZE runs the statement: rolled back, it changes nothing."""
    transaction = admin_conn.transaction()
    await transaction.start()
    try:
        plan = await admin_conn.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", *args)
    finally:
        await transaction.rollback()
    return _inbox_rows_read(json.loads(plan)[0]["Plan"])


async def test_a_households_turns_read_a_handful_of_rows_whatever_its_backlog(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    """Admission looks up each member's oldest waiting message and counts the running ones: index probes, not a
    walk over the backlog. With 2,000 of the household's messages waiting (and years of answered ones), a refused
    admission and a turn of a full household each read a few rows (they read every waiting one before)."""
    family = await make_family(admin_conn, "Anna", "Ben", "Clara", "Dora", "Emil")
    members = [family.id(name) for name in ("Anna", "Ben", "Clara", "Dora", "Emil")]
    await admin_conn.execute(
        """INSERT INTO inbox (household_id, user_id, channel, external_id, text, trace_id, status)
           SELECT $1::bigint, ($2::bigint[])[1 + g % 5], 'web', 'backlog-' || $1::bigint || '-' || g, 'hi', 't',
                  CASE WHEN g < 3 THEN 'processing' WHEN g < 2003 THEN 'queued' ELSE 'done' END
           FROM generate_series(0, 6002) g""",
        family.household_id,
        members,
    )
    await admin_conn.execute("ANALYZE inbox")
    newest = await admin_conn.fetchval(
        "SELECT max(id) FROM inbox WHERE household_id = $1 AND status = 'queued'", family.household_id
    )

    refused = await _rows_read(admin_conn, inbox._ADMIT, newest, 1, 3)
    full = await _rows_read(admin_conn, inbox._TURNS, family.household_id, 1, 3)
    await admin_conn.execute(
        "UPDATE inbox SET status = 'done' WHERE household_id = $1 AND status = 'processing'", family.household_id
    )
    free = await _rows_read(admin_conn, inbox._TURNS, family.household_id, 1, 3)

    # A handful either way (the plan the planner picks moves it between ~4 and ~25); a walk read 2,003 or more.
    assert refused <= 50 and full <= 50 and free <= 50, (refused, full, free)
    await settle(admin_conn, family.household_id)


async def test_turns_go_to_the_oldest_waiting_messages_one_per_member_up_to_the_households_slots(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    family = await make_family(admin_conn, "Anna", "Ben", "Clara")
    writer = InboxWriter(db)
    order = ["Ben", "Anna", "Ben", "Clara", "Anna"]
    rows = [(await writer.accept(message(family, name, f"turns-{family.household_id}-{n}")))[0] for n, name in
            enumerate(order)]  # fmt: skip
    async with db.household(family.household_id) as conn:
        first = await inbox.next_turns(conn, family.household_id, per_member=1, per_household=2)
    async with db.household(family.household_id) as conn:
        none_free = await inbox.next_turns(conn, family.household_id, per_member=1, per_household=2)
    await admin_conn.execute("UPDATE inbox SET status = 'done' WHERE id = $1", rows[0].id)  # Ben's first finished
    async with db.household(family.household_id) as conn:
        after = await inbox.next_turns(conn, family.household_id, per_member=1, per_household=2)

    assert first == [rows[0].id, rows[1].id]  # Ben's and Anna's first, oldest first; Clara's is younger
    assert none_free == []
    assert after == [rows[2].id]  # Ben's second is older than Clara's first
    await settle(admin_conn, family.household_id)
