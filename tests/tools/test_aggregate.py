"""aggregate: exact numbers from SQL, split by currency, grouped on the member's calendar."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from tools.aggregate import MAX_GROUPS
from tools.errors import ToolRetry
from tools.storage.database import Database

from . import REGISTRY, Family, add_memory, call, make_family

NOW = datetime(2025, 3, 14, 12, tzinfo=UTC)


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


async def shopping_family(admin_conn: asyncpg.Connection) -> Family:
    family = await make_family(admin_conn, "Anna", "Ben")
    rows = [
        ("Anna", "Groceries at Rewe", "35.50", "EUR", utc(2025, 1, 10, 12), "groceries"),
        ("Ben", "Groceries at Aldi", "12.25", "EUR", utc(2025, 2, 3, 12), "groceries"),
        ("Anna", "Chewing gum", "0.10", "EUR", utc(2025, 2, 20, 12), "snacks"),
        # 23:30 UTC on 31 January is already 1 February in Berlin.
        ("Ben", "Book in New York", "20.00", "USD", utc(2025, 1, 31, 23, 30), "books"),
    ]
    for author, content, amount, currency, when, category in rows:
        await add_memory(
            admin_conn,
            family,
            author,
            content,
            amount=amount,
            currency=currency,
            occurred_at=when,
            kind="expense",
            category=category,
        )
    await add_memory(
        admin_conn, family, "Anna", "Ben has a cold", kind="health", person="Ben", occurred_at=utc(2025, 2, 5, 8)
    )
    return family


async def test_sum_is_exact_and_split_by_currency(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await shopping_family(admin_conn)
    result = await call(db, family, "Anna", "aggregate", {"op": "sum"})
    assert result["groups"] == [
        {"currency": "EUR", "value": "47.85", "count": 3},
        {"currency": "USD", "value": "20.00", "count": 1},
    ]
    assert result["field"] == "amount" and "totals" in result and result["totals"] == []


async def test_group_by_month_uses_the_member_calendar(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await shopping_family(admin_conn)
    result = await call(db, family, "Anna", "aggregate", {"op": "sum", "group_by": "month"})
    assert result["groups"] == [
        {"key": "2025-01", "currency": "EUR", "value": "35.50", "count": 1},
        {"key": "2025-02", "currency": "EUR", "value": "12.35", "count": 2},
        {"key": "2025-02", "currency": "USD", "value": "20.00", "count": 1},
    ]
    assert result["totals"] == [
        {"currency": "EUR", "value": "47.85", "count": 3},
        {"currency": "USD", "value": "20.00", "count": 1},
    ]
    in_new_york = await call(
        db, family, "Anna", "aggregate", {"op": "sum", "group_by": "month"}, timezone="America/New_York"
    )
    assert {"key": "2025-01", "currency": "USD", "value": "20.00", "count": 1} in in_new_york["groups"]


async def test_group_by_category_with_a_filter(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await shopping_family(admin_conn)
    result = await call(
        db,
        family,
        "Anna",
        "aggregate",
        {
            "op": "sum",
            "group_by": "category",
            "filter": {"field": "currency", "op": "eq", "value": "EUR"},
        },
    )
    assert result["groups"] == [
        {"key": "groceries", "currency": "EUR", "value": "47.75", "count": 2},
        {"key": "snacks", "currency": "EUR", "value": "0.10", "count": 1},
    ]
    assert result["totals"] == [{"currency": "EUR", "value": "47.85", "count": 3}]
    february = await call(
        db,
        family,
        "Anna",
        "aggregate",
        {
            "op": "sum",
            "filter": {"field": "occurred_at", "op": "period", "value": "last_month"},
        },
        now=utc(2025, 3, 2, 9),
    )
    assert february["groups"] == [
        {"currency": "EUR", "value": "12.35", "count": 2},
        {"currency": "USD", "value": "20.00", "count": 1},
    ]


async def test_avg_min_max_and_counts(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna")
    for amount in ("10.00", "10.00", "10.01"):
        await add_memory(admin_conn, family, "Anna", "Parking", amount=amount, currency="EUR", kind="expense")
    await add_memory(admin_conn, family, "Anna", "Dentist check-up went fine", kind="health")

    async def value(op: str, **extra: object) -> str:
        result = await call(db, family, "Anna", "aggregate", {"op": op, **extra})
        return str(result["groups"][0]["value"])

    assert await value("avg") == "10.00"  # 10.0033… rounded in SQL
    assert await value("min") == "10.00" and await value("max") == "10.01"
    assert await value("count") == "4"  # every memory
    assert await value("count", field="amount") == "3"
    assert await value("count", filter={"field": "kind", "op": "eq", "value": "health"}) == "1"
    assert await value("count", filter={"field": "kind", "op": "eq", "value": "income"}) == "0"
    nothing = await call(
        db, family, "Anna", "aggregate", {"op": "sum", "filter": {"field": "kind", "op": "eq", "value": "income"}}
    )
    assert nothing["groups"] == []


async def test_group_by_author_week_and_kind(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await shopping_family(admin_conn)
    by_author = await call(db, family, "Anna", "aggregate", {"op": "sum", "group_by": "author"})
    assert by_author["groups"] == [
        {"key": "Anna", "currency": "EUR", "value": "35.60", "count": 2},
        {"key": "Ben", "currency": "EUR", "value": "12.25", "count": 1},
        {"key": "Ben", "currency": "USD", "value": "20.00", "count": 1},
    ]
    by_week = await call(db, family, "Anna", "aggregate", {"op": "count", "group_by": "week"})
    assert [g["key"] for g in by_week["groups"]] == ["2025-01-06", "2025-01-27", "2025-02-03", "2025-02-17"]
    assert by_week["totals"] == [{"value": "5", "count": 5}]
    by_kind = await call(db, family, "Anna", "aggregate", {"op": "count", "group_by": "kind"})
    assert by_kind["groups"] == [
        {"key": "expense", "value": "4", "count": 4},
        {"key": "health", "value": "1", "count": 1},
    ]


async def test_groups_are_bounded(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna")
    await admin_conn.executemany(
        "INSERT INTO memories (household_id, author_id, content, amount, currency, occurred_at) "
        "VALUES ($1, $2, 'coffee', 2.50, 'EUR', $3)",
        [
            (family.household_id, family.id("Anna"), utc(2024, 1, 1, 12) + timedelta(days=n))
            for n in range(MAX_GROUPS + 5)
        ],
    )
    result = await call(db, family, "Anna", "aggregate", {"op": "sum", "group_by": "day"})
    assert len(result["groups"]) == MAX_GROUPS and result["truncated"] is True
    assert result["totals"] == [{"currency": "EUR", "value": "512.50", "count": MAX_GROUPS + 5}]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"op": "median"}, "op: Input should be"),
        ({"op": "sum", "field": "content"}, "field: Input should be 'amount'"),
        ({"op": "sum", "group_by": "household"}, "group_by: Input should be"),
        ({"op": "sum", "filter": {"field": "amount", "op": "gt", "value": "x"}}, "amount needs a number"),
    ],
)
def test_bad_arguments_go_back_to_the_model(args: dict[str, object], expected: str) -> None:
    with pytest.raises(ToolRetry) as caught:
        REGISTRY.validate("aggregate", args)
    assert expected in caught.value.message
