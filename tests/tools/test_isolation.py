"""Household isolation through every tool: from household A's context nothing of household B is seen or changed.

Each check ends by comparing B's rows, read with the owner connection (which bypasses RLS), to a snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest

from tools.errors import ToolError, ToolRetry
from tools.storage.database import Database

from . import REGISTRY, Family, call, make_family, tool_context


@dataclass(frozen=True)
class World:
    a: Family
    b: Family
    a_ids: list[int]
    b_ids: list[int]
    b_forgotten: int


async def snapshot(admin_conn: asyncpg.Connection, family: Family) -> list[tuple[Any, ...]]:
    rows = await admin_conn.fetch(
        """SELECT id, household_id, author_id, content, ai_understanding::text, embedding::text, amount, currency,
                  occurred_at, visibility, deleted_at, updated_at
           FROM memories WHERE household_id = $1 ORDER BY id""",
        family.household_id,
    )
    return [tuple(row.values()) for row in rows]


@pytest.fixture
async def world(db: Database, admin_conn: asyncpg.Connection) -> World:
    a = await make_family(admin_conn, "Anna", "Ben")
    b = await make_family(admin_conn, "Carl", "Dora")
    a_ids = [
        (
            await call(
                db,
                a,
                "Anna",
                "store",
                {
                    "content": "Groceries at Rewe",
                    "kind": "expense",
                    "amount": "10.00",
                    "currency": "EUR",
                    "category": "groceries",
                },
            )
        )["memory_id"],
        (await call(db, a, "Ben", "store", {"content": "Ben's bike lock code is 1234", "kind": "fact"}))["memory_id"],
    ]
    b_ids = [
        (
            await call(
                db,
                b,
                "Carl",
                "store",
                {
                    "content": "Groceries at Zebrafish market",
                    "kind": "expense",
                    "amount": "999.99",
                    "currency": "EUR",
                    "category": "groceries",
                },
            )
        )["memory_id"],
        (
            await call(
                db, b, "Dora", "store", {"content": "Zebrafish secret diary", "kind": "note", "visibility": "private"}
            )
        )["memory_id"],
        (await call(db, b, "Carl", "store", {"content": "Zebrafish tank cleaning", "kind": "plan"}))["memory_id"],
    ]
    forgotten = (await call(db, b, "Carl", "store", {"content": "Zebrafish food", "kind": "shopping"}))["memory_id"]
    await call(db, b, "Carl", "forget", {"memory_ids": [forgotten]})
    return World(a, b, a_ids, b_ids, forgotten)


def ids(result: dict[str, Any]) -> set[int]:
    return {memory["memory_id"] for memory in result["memories"]}


CRAFTED_FILTERS: list[dict[str, Any]] = [
    {"field": "author", "op": "eq", "value": "Carl"},
    {"field": "author", "op": "in", "value": ["Carl", "Dora", "carl"]},
    {"field": "author", "op": "ne", "value": "Anna"},
    {"field": "content", "op": "contains", "value": "Zebrafish"},
    {"field": "visibility", "op": "eq", "value": "private"},
    {"field": "amount", "op": "gte", "value": 999},
    {"any": [{"field": "author", "op": "exists", "value": False}, {"not": {"field": "author", "op": "exists"}}]},
    {"any": [{"field": "content", "op": "contains", "value": "' OR 1=1 --"}, {"field": "amount", "op": "exists"}]},
    {"not": {"field": "content", "op": "contains", "value": "nothing-matches-this"}},
]


async def test_reads_from_a_never_see_b(db: Database, admin_conn: asyncpg.Connection, world: World) -> None:
    before = await snapshot(admin_conn, world.b)
    everything = set(world.b_ids) | {world.b_forgotten}

    for query in ("Zebrafish market groceries", "secret diary", "groceries"):
        found = await call(db, world.a, "Anna", "search", {"query": query, "limit": 50})
        assert ids(found) <= set(world.a_ids)
    assert ids(await call(db, world.a, "Anna", "search", {"limit": 50})) == set(world.a_ids)
    for tree in CRAFTED_FILTERS:
        for args in ({"filter": tree, "limit": 50}, {"query": "Zebrafish", "filter": tree, "limit": 50}):
            assert not ids(await call(db, world.a, "Ben", "search", args)) & everything, tree
        totals = await call(db, world.a, "Ben", "aggregate", {"op": "count", "filter": tree, "group_by": "author"})
        assert {g.get("key") for g in totals["groups"]} <= {"Anna", "Ben", None}

    summed = await call(db, world.a, "Anna", "aggregate", {"op": "sum", "group_by": "category"})
    assert summed["groups"] == [{"key": "groceries", "currency": "EUR", "value": "10.00", "count": 1}]
    counted = await call(db, world.a, "Anna", "aggregate", {"op": "count"})
    assert counted["groups"] == [{"value": "2", "count": 2}]
    assert await snapshot(admin_conn, world.b) == before


async def test_writes_from_a_never_touch_b(db: Database, admin_conn: asyncpg.Connection, world: World) -> None:
    before = await snapshot(admin_conn, world.b)

    stored = await call(db, world.a, "Anna", "store", {"content": "Zebrafish are cute", "kind": "fact"})
    assert await admin_conn.fetchval("SELECT household_id FROM memories WHERE id = $1", stored["memory_id"]) == (
        world.a.household_id
    )
    for memory_id in [*world.b_ids, world.b_forgotten]:
        with pytest.raises(ToolRetry, match="no memory"):
            await call(db, world.a, "Anna", "update_memory_fields", {"memory_id": memory_id, "content": "hijacked"})
        with pytest.raises(ToolRetry, match="no memory"):
            await call(db, world.a, "Anna", "update_memory_fields", {"memory_id": memory_id, "visibility": "household"})
    forgotten = await call(db, world.a, "Anna", "forget", {"memory_ids": [*world.b_ids, world.a_ids[0]]})
    assert forgotten == {"forgotten": [world.a_ids[0]], "not_found": sorted(world.b_ids), "not_allowed": []}
    restored = await call(db, world.a, "Anna", "restore", {"memory_ids": [world.b_forgotten, world.a_ids[0]]})
    assert restored == {"restored": [world.a_ids[0]], "not_found": [world.b_forgotten], "not_allowed": []}

    assert await snapshot(admin_conn, world.b) == before


@pytest.mark.parametrize("tool_name", REGISTRY.names())
@pytest.mark.parametrize("key", ["household_id", "user_id", "author_id"])
def test_no_tool_accepts_who_is_asking_as_an_argument(tool_name: str, key: str) -> None:
    with pytest.raises(ToolRetry, match=f"{key}: Extra inputs are not permitted"):
        REGISTRY.validate(tool_name, {key: 1})


async def test_a_context_claiming_b_on_a_connection_scoped_to_a(
    db: Database, admin_conn: asyncpg.Connection, world: World
) -> None:
    """If a bug handed a tool B's id over A's transaction, row-level security still keeps B out of reach."""
    before = await snapshot(admin_conn, world.b)
    lying = {"household_id": world.b.household_id}

    assert ids(await call(db, world.a, "Anna", "search", {"query": "Zebrafish"}, **lying)) == set()
    assert ids(await call(db, world.a, "Anna", "search", {"limit": 50}, **lying)) == set()
    assert (await call(db, world.a, "Anna", "aggregate", {"op": "sum"}, **lying))["groups"] == []
    with pytest.raises(ToolError):
        await call(db, world.a, "Anna", "store", {"content": "planted", "kind": "note"}, **lying)
    with pytest.raises(ToolRetry):
        await call(db, world.a, "Anna", "update_memory_fields", {"memory_id": world.b_ids[0], "amount": 1}, **lying)
    assert (await call(db, world.a, "Anna", "forget", {"memory_ids": world.b_ids}, **lying))["forgotten"] == []
    assert (await call(db, world.a, "Anna", "restore", {"memory_ids": [world.b_forgotten]}, **lying))["restored"] == []

    assert await snapshot(admin_conn, world.b) == before
    assert await admin_conn.fetchval("SELECT count(*) FROM memories WHERE content = 'planted'") == 0


async def test_b_still_sees_its_own_rows(db: Database, world: World) -> None:
    """The isolation above is not an empty database: B's own members find their rows (Dora her private one)."""
    assert ids(await call(db, world.b, "Dora", "search", {"limit": 50})) == set(world.b_ids)
    assert ids(await call(db, world.b, "Carl", "search", {"limit": 50})) == {world.b_ids[0], world.b_ids[2]}
    async with tool_context(db, world.b, "Carl") as ctx:
        assert await ctx.conn.fetchval("SELECT count(*) FROM memories") == 3  # incl. the forgotten one
