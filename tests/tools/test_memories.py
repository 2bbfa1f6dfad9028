"""store, search, update_memory_fields, forget and restore against the real schema with row-level security."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import cast

import asyncpg
import pytest

from tools.errors import ToolRetry
from tools.storage.database import Database

from . import REGISTRY, HashEmbedder, add_memory, bag_of_words, call, make_family, tool_context

NOW = datetime(2025, 3, 14, 17, 30, tzinfo=UTC)


async def test_store_writes_one_row_for_the_asking_member(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna", "Ben")
    inbox_id = await admin_conn.fetchval(
        # Already done: a queued row would be picked up by a later test's sweeper.
        "INSERT INTO inbox (household_id, user_id, channel, external_id, trace_id, status) "
        "VALUES ($1, $2, 'cli', $3, 't', 'done') RETURNING id",
        family.household_id,
        family.id("Ben"),
        f"msg-{family.household_id}",
    )
    embedder = HashEmbedder()
    stored = await call(
        db,
        family,
        "Ben",
        "store",
        {
            "content": "Paid 35.5 EUR for groceries at Rewe",
            "kind": "expense",
            "category": "Groceries",
            "amount": 35.5,
            "currency": "eur",
            "merchant": "Rewe",
            "tags": ["Food", "weekly"],
            "occurred_at": "2025-03-14T09:15",
            "details": {"items": 12, "paid_with": "card"},
        },
        now=NOW,
        embedder=embedder,
        inbox_id=inbox_id,
    )

    assert stored["amount"] == "35.50" and stored["currency"] == "EUR"
    assert stored["category"] == "groceries" and stored["tags"] == ["food", "weekly"]
    assert stored["occurred_at"] == "2025-03-14T09:15:00+01:00"  # naive = the member's timezone
    assert stored["author"] == "Ben" and stored["visibility"] == "household"
    assert embedder.calls == [(("Paid 35.5 EUR for groceries at Rewe",), "passage")]
    row = await admin_conn.fetchrow("SELECT * FROM memories WHERE id = $1", stored["memory_id"])
    assert row["household_id"] == family.household_id and row["author_id"] == family.id("Ben")
    assert row["source_inbox_id"] == inbox_id and row["amount"] == Decimal("35.50")
    assert row["occurred_at"] == datetime(2025, 3, 14, 8, 15, tzinfo=UTC)
    assert row["embedding"] is not None
    assert json.loads(row["ai_understanding"]) == {
        "kind": "expense",
        "category": "groceries",
        "merchant": "Rewe",
        "tags": ["food", "weekly"],
        "details": {"items": 12, "paid_with": "card"},
    }


async def test_store_defaults_and_bare_dates(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna", timezone="America/New_York")
    now_note = await call(db, family, "Anna", "store", {"content": "Kids love pancakes", "kind": "fact"}, now=NOW)
    assert now_note["occurred_at"] == "2025-03-14T13:30:00-04:00"
    dated = await call(
        db,
        family,
        "Anna",
        "store",
        {"content": "Dentist for Ben", "kind": "plan", "occurred_at": "2025-04-02"},
        now=NOW,
    )
    assert dated["occurred_at"] == "2025-04-02T12:00:00-04:00"  # a bare date is kept at local noon


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"content": "Lunch", "kind": "expense"}, "amount (and currency) is required for kind expense"),
        ({"content": "Lunch", "kind": "expense", "amount": 5}, "currency is required when amount is set"),
        ({"content": "Lunch", "kind": "expense", "amount": "1.234", "currency": "EUR"}, "amount: Decimal input"),
        ({"content": "Lunch", "kind": "expense", "amount": 1e12, "currency": "EUR"}, "amount: Decimal input"),
        ({"content": "Lunch", "kind": "expense", "amount": 5, "currency": "euro"}, "'euro' is not a 3-letter"),
        ({"content": "", "kind": "note"}, "content: Field required"),  # blank is absent
        ({"content": "x" * 4001, "kind": "note"}, "content: String should have at most 4000"),
        ({"content": "Lunch", "kind": "gossip"}, "kind: Input should be"),
        ({"content": "Lunch", "kind": "note", "category": "food & drink"}, "category: 'food-&-drink' is not a slug"),
        ({"content": "Lunch", "kind": "note", "tags": [str(n) for n in range(11)]}, "tags: List should have at most"),
        ({"content": "Lunch", "kind": "note", "occurred_at": "soon"}, "occurred_at: 'soon' is not an ISO 8601 date"),
        ({"content": "Lunch", "kind": "note", "household_id": 1}, "household_id: Extra inputs are not permitted"),
        ({"content": "Lunch", "kind": "note", "details": {"k": float("nan")}}, "details.k"),
        # Issue 25: dates at the ends of the calendar overflowed period arithmetic; huge numbers reached jsonb.
        ({"content": "Lunch", "kind": "note", "occurred_at": "0001-01-01"}, "years 1900 to 2200"),
        ({"content": "Lunch", "kind": "note", "occurred_at": "9999-12-31T23:00:00-05:00"}, "years 1900 to 2200"),
        ({"content": "Lunch", "kind": "note", "details": {"k": 10**5000}}, "a detail number is finite"),
        ({"content": "Lunch", "kind": "note", "details": {"k": [1, 2]}}, "a detail value is a short text"),
        ({"content": "Lunch", "kind": "expense", "amount": "1e14", "currency": "EUR"}, "amount"),
        (
            {"content": "Lunch", "kind": "note", "filter": {"field": "kind", "op": "eq", "value": "note"}},
            "filter: Extra inputs are not permitted",
        ),
    ],
)
def test_store_arguments_are_checked_before_any_sql(args: dict[str, object], expected: str) -> None:
    with pytest.raises(ToolRetry) as caught:
        REGISTRY.validate("store", args)
    assert caught.value.tool == "store"
    assert expected in caught.value.message


@pytest.mark.parametrize(
    ("written", "code"),
    [("€", "EUR"), ("$", "USD"), ("£", "GBP"), ("¥", "CNY"), ("元", "CNY"), ("rmb", "CNY"), (" eur ", "EUR")],
)
def test_currency_signs_become_codes(written: str, code: str) -> None:
    args = REGISTRY.validate("store", {"content": "Lunch", "kind": "expense", "amount": 5, "currency": written})
    assert args.currency == code  # type: ignore[attr-defined]


def test_blank_values_are_absent_and_a_fact_carries_no_amount() -> None:
    fact = REGISTRY.validate(
        "store", {"content": "She is 104 cm", "kind": "health", "amount": "104cm", "currency": "", "category": " "}
    )
    assert (fact.amount, fact.currency, fact.category) == (None, None, None)  # type: ignore[attr-defined]
    expense = REGISTRY.validate("store", {"content": "Pizza", "kind": "expense", "amount": "12", "currency": "EUR",
                                          "merchant": "", "tags": None})  # fmt: skip
    assert (expense.merchant, expense.tags) == (None, [])  # type: ignore[attr-defined]
    with pytest.raises(ToolRetry, match="amount"):
        REGISTRY.validate("store", {"content": "Pizza", "kind": "expense", "amount": " ", "currency": "EUR"})


async def test_a_filter_that_hides_everything_is_dropped_for_the_query(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    family = await make_family(admin_conn, "Anna")
    await call(db, family, "Anna", "store", {"content": "The wifi password is tulip42", "kind": "fact"}, now=NOW)
    wrong_guess = {"field": "category", "op": "eq", "value": "internet"}

    found = await call(db, family, "Anna", "search", {"query": "wifi password", "filter": wrong_guess})
    exact = await call(db, family, "Anna", "search", {"filter": wrong_guess})

    assert found["filter_dropped"] is True
    assert [m["content"] for m in found["memories"]] == ["The wifi password is tulip42"]
    assert exact["count"] == 0 and exact["filter_dropped"] is False  # without a query the filter is the question


async def test_search_by_meaning_and_by_filter(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna", "Ben")
    for args in [
        {"content": "Ben has a dentist appointment on Friday", "kind": "plan", "person": "Ben"},
        {"content": "Groceries at Rewe", "kind": "expense", "amount": "35.50", "currency": "EUR"},
        {"content": "Petrol for the car", "kind": "expense", "amount": "60.00", "currency": "EUR"},
        {"content": "Anna prefers window seats", "kind": "fact", "person": "Anna"},
    ]:
        await call(db, family, "Anna", "store", args, now=NOW)

    embedder = HashEmbedder()
    found = await call(db, family, "Ben", "search", {"query": "dentist appointment", "limit": 2}, embedder=embedder)
    assert embedder.calls == [(("dentist appointment",), "query")]
    assert found["memories"][0]["content"] == "Ben has a dentist appointment on Friday"
    assert found["memories"][0]["similarity"] > found["memories"][1]["similarity"]
    assert found["count"] == 2

    expenses = await call(
        db,
        family,
        "Ben",
        "search",
        {"filter": {"field": "kind", "op": "eq", "value": "expense"}, "order": "amount_desc"},
    )
    assert [m["amount"] for m in expenses["memories"]] == ["60.00", "35.50"]
    assert all("similarity" not in m for m in expenses["memories"])
    assert expenses["memories"][0]["author"] == "Anna"
    assert expenses["memories"][0]["occurred_at"] == "2025-03-14T18:30:00+01:00"

    both = await call(
        db,
        family,
        "Ben",
        "search",
        {"query": "groceries", "filter": {"field": "amount", "op": "lt", "value": 50}, "limit": 5},
    )
    assert [m["content"] for m in both["memories"]] == ["Groceries at Rewe"]

    newest = await call(db, family, "Ben", "search", {"limit": 3})
    assert newest["count"] == 3
    blank = await call(db, family, "Ben", "search", {"query": " ", "limit": 3})
    assert blank == newest


async def test_search_sets_up_the_filtered_hnsw_scan(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna")
    await add_memory(admin_conn, family, "Anna", "Swimming lessons on Tuesday", kind="plan")
    for limit, candidates in ((3, 40), (50, 100)):  # pgvector's default 40, or twice the results asked for
        async with tool_context(db, family, "Anna") as ctx:
            await REGISTRY.run(ctx, "search", REGISTRY.validate("search", {"query": "swimming", "limit": limit}))
            assert await ctx.conn.fetchval("SHOW hnsw.iterative_scan") == "relaxed_order"
            assert int(await ctx.conn.fetchval("SHOW hnsw.ef_search")) == candidates


async def test_update_changes_only_the_given_fields(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna", "Ben")
    stored = await call(
        db,
        family,
        "Anna",
        "store",
        {
            "content": "Groceries at Rewe",
            "kind": "expense",
            "amount": "35.50",
            "currency": "EUR",
            "category": "groceries",
            "person": "Anna",
            "tags": ["food"],
        },
        now=NOW,
    )
    memory_id = stored["memory_id"]
    before = await admin_conn.fetchval("SELECT embedding::text FROM memories WHERE id = $1", memory_id)

    updated = await call(
        db, family, "Ben", "update_memory_fields", {"memory_id": memory_id, "amount": "36.10", "person": None}
    )
    assert updated["amount"] == "36.10" and "person" not in updated
    assert updated["category"] == "groceries" and updated["tags"] == ["food"] and updated["author"] == "Anna"
    assert await admin_conn.fetchval("SELECT embedding::text FROM memories WHERE id = $1", memory_id) == before

    embedder = HashEmbedder()
    renamed = await call(
        db,
        family,
        "Ben",
        "update_memory_fields",
        {"memory_id": memory_id, "content": "Groceries at Aldi", "occurred_at": "2025-03-01"},
        embedder=embedder,
    )
    assert renamed["content"] == "Groceries at Aldi" and renamed["occurred_at"].startswith("2025-03-01T12:00")
    assert embedder.calls == [(("Groceries at Aldi",), "passage")]
    after = await admin_conn.fetchval("SELECT embedding::text FROM memories WHERE id = $1", memory_id)
    assert after != before
    assert [round(float(v), 4) for v in after.strip("[]").split(",")] == [
        round(v, 4) for v in bag_of_words("Groceries at Aldi")
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"memory_id": 999_999_999, "content": "x"}, "there is no memory 999999999"),
        ({"amount": None}, "amount (and currency) is required for kind expense"),
        ({"kind": "income", "currency": None}, "currency is required when amount is set"),
        ({"visibility": "private"}, "only the member who made memory"),
        ({}, "give at least one field to change"),
        ({"content": None}, "content cannot be cleared"),
    ],
)
async def test_update_refusals_go_back_to_the_model(
    db: Database, admin_conn: asyncpg.Connection, change: dict[str, object], expected: str
) -> None:
    family = await make_family(admin_conn, "Anna", "Ben")
    stored = await call(
        db, family, "Anna", "store", {"content": "Cinema", "kind": "expense", "amount": 24, "currency": "EUR"}, now=NOW
    )
    with pytest.raises(ToolRetry) as caught:
        await call(db, family, "Ben", "update_memory_fields", {"memory_id": stored["memory_id"], **change})
    assert caught.value.tool == "update_memory_fields"
    assert expected in caught.value.message
    assert await admin_conn.fetchval("SELECT amount FROM memories WHERE id = $1", stored["memory_id"]) == 24


async def test_forget_then_restore(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna")
    kept = await call(
        db, family, "Anna", "store", {"content": "Bakery", "kind": "expense", "amount": 4, "currency": "EUR"}
    )
    gone = await call(
        db, family, "Anna", "store", {"content": "Bakery twice", "kind": "expense", "amount": 4, "currency": "EUR"}
    )
    ids = [kept["memory_id"], gone["memory_id"]]

    forgotten = await call(db, family, "Anna", "forget", {"memory_ids": [gone["memory_id"], 999_999_998]})
    assert forgotten == {"forgotten": [gone["memory_id"]], "not_found": [999_999_998], "not_allowed": []}
    assert await admin_conn.fetchval("SELECT deleted_at IS NOT NULL FROM memories WHERE id = $1", gone["memory_id"])
    listed = await call(db, family, "Anna", "search", {"query": "bakery"})
    assert [m["memory_id"] for m in listed["memories"]] == [kept["memory_id"]]
    total = await call(db, family, "Anna", "aggregate", {"op": "sum"})
    assert total["groups"] == [{"currency": "EUR", "value": "4.00", "count": 1}]
    again = await call(db, family, "Anna", "forget", {"memory_ids": [gone["memory_id"]]})
    assert again == {"forgotten": [], "not_found": [gone["memory_id"]], "not_allowed": []}
    with pytest.raises(ToolRetry, match="no memory"):
        await call(db, family, "Anna", "update_memory_fields", {"memory_id": gone["memory_id"], "amount": 5})

    restored = await call(db, family, "Anna", "restore", {"memory_ids": ids})
    assert restored == {"restored": [gone["memory_id"]], "not_found": [kept["memory_id"]], "not_allowed": []}
    listed = await call(db, family, "Anna", "search", {"query": "bakery"})
    assert sorted(m["memory_id"] for m in listed["memories"]) == sorted(ids)


async def test_private_memories_stay_with_their_author(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna", "Ben")
    secret = await call(
        db,
        family,
        "Anna",
        "store",
        {
            "content": "Birthday present for Ben: a bike",
            "kind": "expense",
            "amount": 300,
            "currency": "EUR",
            "visibility": "private",
        },
    )
    await call(
        db, family, "Anna", "store", {"content": "Bike repair", "kind": "expense", "amount": 20, "currency": "EUR"}
    )

    mine = await call(db, family, "Anna", "search", {"query": "bike present"})
    assert secret["memory_id"] in [m["memory_id"] for m in mine["memories"]]
    theirs = await call(db, family, "Ben", "search", {"query": "bike present"})
    assert secret["memory_id"] not in [m["memory_id"] for m in theirs["memories"]]
    private = {"field": "visibility", "op": "eq", "value": "private"}
    crafted = await call(db, family, "Ben", "search", {"filter": private})
    assert crafted["count"] == 0
    assert (await call(db, family, "Ben", "aggregate", {"op": "sum"}))["groups"][0]["value"] == "20.00"
    assert (await call(db, family, "Anna", "aggregate", {"op": "sum"}))["groups"][0]["value"] == "320.00"
    with pytest.raises(ToolRetry, match="no memory"):
        await call(db, family, "Ben", "update_memory_fields", {"memory_id": secret["memory_id"], "amount": 1})
    assert (await call(db, family, "Ben", "forget", {"memory_ids": [secret["memory_id"]]}))["forgotten"] == []
    row = await admin_conn.fetchrow("SELECT amount, deleted_at FROM memories WHERE id = $1", secret["memory_id"])
    assert row["amount"] == 300 and row["deleted_at"] is None


class RecordingConnection:
    """Passes every call to the real connection and keeps the last `fetch` statement (to EXPLAIN it)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self.fetched: list[tuple[str, tuple[object, ...]]] = []

    async def fetch(self, sql: str, *params: object) -> list[asyncpg.Record]:
        self.fetched.append((sql, params))
        rows: list[asyncpg.Record] = await self.conn.fetch(sql, *params)
        return rows

    def __getattr__(self, name: str) -> object:
        return getattr(self.conn, name)


async def test_semantic_search_can_use_the_hnsw_index(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna")
    await add_memory(admin_conn, family, "Anna", "Swimming lessons on Tuesday", kind="plan")
    async with tool_context(db, family, "Anna") as ctx:
        recorder = RecordingConnection(ctx.conn)
        ctx.conn = cast(asyncpg.Connection, recorder)
        plans = {"field": "kind", "op": "eq", "value": "plan"}
        args = REGISTRY.validate("search", {"query": "swimming", "filter": plans})
        await REGISTRY.run(ctx, "search", args)
        sql, params = recorder.fetched[-1]
        # Tiny tables favour "household index + sort"; penalising sorts shows the statement can be served by HNSW.
        await recorder.conn.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")
        plan = "\n".join(r[0] for r in await recorder.conn.fetch("EXPLAIN " + sql, *params))
    assert "memories_embedding" in plan, plan


async def test_a_child_changes_only_childrens_memories(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna", "Lea")
    roles = {"Lea": "child"}
    adults = await add_memory(admin_conn, family, "Anna", "The wifi password is tulip42", kind="fact")
    own = await add_memory(admin_conn, family, "Lea", "My favourite colour is green", kind="fact")

    with pytest.raises(ToolRetry, match="child"):
        await call(db, family, "Lea", "update_memory_fields", {"memory_id": adults, "content": "x"}, roles=roles)
    changed = await call(db, family, "Lea", "update_memory_fields", {"memory_id": own, "content": "Blue"}, roles=roles)
    forgot = await call(db, family, "Lea", "forget", {"memory_ids": [adults, own]}, roles=roles)

    assert changed["previous"]["content"] == "My favourite colour is green"
    assert (forgot["forgotten"], forgot["not_allowed"]) == ([own], [adults])
    live = await admin_conn.fetchval("SELECT deleted_at IS NULL FROM memories WHERE id = $1", adults)
    assert live


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("search", {"filter": {"field": "occurred_at", "op": "gte", "value": "0001-01-01"}}, "years 1900 to 2200"),
        ("search", {"filter": {"field": "created_at", "op": "eq", "value": "9999-12-31"}}, "years 1900 to 2200"),
        (
            "aggregate",
            {"op": "count", "filter": {"field": "occurred_at", "op": "between", "value": ["1900-01-01", "9999-12-31"]}},
            "years 1900 to 2200",
        ),
        ("search", {"filter": {"field": "amount", "op": "gt", "value": 10**5000}}, "filter"),
        ("forget", {"memory_ids": [2**63]}, "no row has an id that large"),
        ("restore", {"memory_ids": [1, 10**20]}, "memory_ids.1: no row has an id that large"),
        ("update_memory_fields", {"memory_id": 2**64, "content": "x"}, "no row has an id that large"),
        ("update_memory_fields", {"memory_id": 1, "occurred_at": "9999-12-31"}, "years 1900 to 2200"),
        (
            "store",
            {
                "content": "x",
                "kind": "note",
                "details": {"a": {"b": {"c": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}},
            },
            "nest",
        ),
    ],
)
def test_values_past_what_postgres_holds_are_refused_before_any_sql(tool: str, args: dict, expected: str) -> None:
    with pytest.raises(ToolRetry) as caught:
        REGISTRY.validate(tool, args)
    assert expected in caught.value.message


async def test_a_stored_date_at_the_end_of_the_calendar_does_not_break_searches(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    # Stored before dates were bounded: 9999-12-31T23:00Z is past the calendar on a UTC+1 or UTC+9 clock.
    family = await make_family(admin_conn, "Anna", timezone="Asia/Tokyo")
    await add_memory(admin_conn, family, "Anna", "Far future note", occurred_at=datetime(9999, 12, 31, 23, tzinfo=UTC))
    found = await call(db, family, "Anna", "search", {"query": "far future note"})
    assert found["memories"][0]["occurred_at"] == "9999-12-31T23:00:00+00:00"
    counted = await call(db, family, "Anna", "aggregate", {"op": "count", "group_by": "day"})
    assert counted["matched"] == 1


async def test_nul_and_lone_surrogates_in_any_text_argument_are_stored_without_them(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    family = await make_family(admin_conn, "Anna")
    stored = await call(
        db,
        family,
        "Anna",
        "store",
        {
            "content": "Pin\x00 code \ud800 1234",
            "kind": "fact",
            "person": "Ben\x00",
            "tags": ["a\x00b"],
            "details": {"ke\x00y": "va\x00lue", "\udfff": "\ud83d\ude00"},
        },
    )
    assert stored["content"] == "Pin code \ufffd 1234"
    assert stored["details"] == {"key": "value", "\ufffd": "😀"}  # a surrogate pair is one character
    row = await admin_conn.fetchrow("SELECT content, ai_understanding FROM memories WHERE id = $1", stored["memory_id"])
    assert row["content"] == "Pin code \ufffd 1234"
    assert json.loads(row["ai_understanding"])["person"] == "Ben"
