"""Private means private, in PostgreSQL itself: connected as the app role, with another member's settings, a
transaction reads none of a member's private rows — memories, events, reminders, lists, list items — and a row kept
from one member (a surprise) is read by everyone but that member. A transaction that acts for nobody (a group chat,
a digest) reads only what every member may read. The rows are written with the owner's connection, so nothing but
row-level security stands between them and the app."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg
import pytest

from tests.conftest import APP_ROLE
from tools.storage.database import Database

TABLES = ("memories", "events", "reminders", "lists", "list_items")


@dataclass(frozen=True)
class Household:
    id: int
    sam: int
    alex: int
    mia: int
    rows: dict[tuple[str, str], int]  # (table, "private" | "hidden" | "shared") -> id


async def _user(admin: asyncpg.Connection, household: int, name: str, role: str) -> int:
    return int(
        await admin.fetchval(
            "INSERT INTO users (household_id, name, role) VALUES ($1, $2, $3) RETURNING id", household, name, role
        )
    )


async def _row(admin: asyncpg.Connection, table: str, household: int, author: int, kind: str, hidden: int) -> int:
    """One row of `table` by `author`: private to them, kept from `hidden`, or the household's."""
    visibility = "private" if kind == "private" else "household"
    hidden_from = hidden if kind == "hidden" else None
    common = (household, author, visibility, hidden_from)
    if table == "memories":
        sql = """INSERT INTO memories (household_id, author_id, visibility, hidden_from, content)
                 VALUES ($1, $2, $3, $4, 'a note') RETURNING id"""
    elif table == "events":
        sql = """INSERT INTO events (household_id, created_by, visibility, hidden_from, uid, title, starts_at,
                                     timezone, source)
                 VALUES ($1, $2, $3, $4, gen_random_uuid()::text, 'party', now(), 'UTC', 'chat') RETURNING id"""
    elif table == "reminders":
        sql = """INSERT INTO reminders (household_id, created_by, visibility, hidden_from, recipient_ids, text,
                                        timezone, next_fire_at)
                 VALUES ($1, $2, $3, $4, ARRAY[$2::bigint], 'buy the cake', 'UTC', now()) RETURNING id"""
    elif table == "lists":
        sql = """INSERT INTO lists (household_id, created_by, visibility, hidden_from, name)
                 VALUES ($1, $2, $3, $4, gen_random_uuid()::text) RETURNING id"""
    else:
        shared_list = await admin.fetchval(
            "INSERT INTO lists (household_id, created_by, name) VALUES ($1, $2, gen_random_uuid()::text) RETURNING id",
            household,
            author,
        )
        sql = f"""INSERT INTO list_items (household_id, created_by, visibility, hidden_from, list_id, text)
                  VALUES ($1, $2, $3, $4, {int(shared_list)}, 'balloons') RETURNING id"""
    return int(await admin.fetchval(sql, *common))


@pytest.fixture
async def household(admin_conn: asyncpg.Connection) -> Household:
    """Alex writes one private, one kept-from-Sam and one shared row of every kind."""
    household_id = int(await admin_conn.fetchval("INSERT INTO households (name) VALUES ('Private') RETURNING id"))
    sam = await _user(admin_conn, household_id, "Sam", "owner")
    alex = await _user(admin_conn, household_id, "Alex", "adult")
    mia = await _user(admin_conn, household_id, "Mia", "child")
    rows = {
        (table, kind): await _row(admin_conn, table, household_id, alex, kind, sam)
        for table in TABLES
        for kind in ("private", "hidden", "shared")
    }
    return Household(household_id, sam, alex, mia, rows)


async def _seen(db: Database, household: Household, member: int | None, table: str) -> set[int]:
    ids = [household.rows[(table, kind)] for kind in ("private", "hidden", "shared")]
    async with db.household(household.id, member) as conn:
        # The app role itself, which no policy exempts: not a superuser, not the tables' owner, no BYPASSRLS.
        role = await conn.fetchrow(
            """SELECT current_user AS name, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"""
        )
        assert (role["name"], role["rolsuper"], role["rolbypassrls"]) == (APP_ROLE, False, False)
        assert await conn.fetchval("SELECT tableowner <> current_user FROM pg_tables WHERE tablename = $1", table)
        rows = await conn.fetch(f"SELECT id FROM {table} WHERE id = ANY($1::bigint[])", ids)
    return {int(r["id"]) for r in rows}


@pytest.mark.parametrize("table", TABLES)
async def test_another_members_settings_read_none_of_a_private_row(
    db: Database, household: Household, table: str
) -> None:
    private, hidden, shared = (household.rows[(table, kind)] for kind in ("private", "hidden", "shared"))
    assert await _seen(db, household, household.alex, table) == {private, hidden, shared}
    assert await _seen(db, household, household.sam, table) == {shared}  # the surprise is kept from Sam
    assert await _seen(db, household, household.mia, table) == {hidden, shared}
    assert await _seen(db, household, None, table) == {shared}  # a group chat, a digest: what everyone may see


@pytest.mark.parametrize("table", TABLES)
async def test_another_member_cannot_change_or_delete_a_private_row(
    db: Database, admin_conn: asyncpg.Connection, household: Household, table: str
) -> None:
    private = household.rows[(table, "private")]
    async with db.household(household.id, household.sam) as conn:
        assert await conn.execute(f"UPDATE {table} SET updated_by = $2 WHERE id = $1", private, household.sam) == (
            "UPDATE 0"
        )
        assert await conn.execute(f"DELETE FROM {table} WHERE id = $1", private) == "DELETE 0"
    assert await admin_conn.fetchval(f"SELECT updated_by FROM {table} WHERE id = $1", private) is None


async def test_a_row_cannot_be_made_private_for_someone_else(db: Database, household: Household) -> None:
    shared = household.rows[("memories", "shared")]
    async with db.household(household.id, household.sam) as conn:
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute("UPDATE memories SET visibility = 'private' WHERE id = $1", shared)


async def test_items_of_a_private_list_are_private_too(
    db: Database, admin_conn: asyncpg.Connection, household: Household
) -> None:
    private_list = household.rows[("lists", "private")]
    item = await admin_conn.fetchval(
        """INSERT INTO list_items (household_id, list_id, created_by, text) VALUES ($1, $2, $3, 'ring')
           RETURNING id""",
        household.id,
        private_list,
        household.alex,
    )
    for member, seen in ((household.alex, 1), (household.sam, 0), (household.mia, 0), (None, 0)):
        async with db.household(household.id, member) as conn:
            assert await conn.fetchval("SELECT count(*) FROM list_items WHERE id = $1", item) == seen
