"""The filter language: allow-lists, bounds, parameter binding, time semantics, and SQL that PostgreSQL runs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest
from pydantic import BaseModel

from tools.errors import ToolRetry
from tools.filters import _FIELDS, Filter, compile_filter
from tools.infra.periods import PERIODS, period_range
from tools.storage.database import Database

from . import REGISTRY, add_memory, call, make_family


class Args(BaseModel):
    filter: Filter


@dataclass(frozen=True)
class Scope:
    household_id: int = 7
    timezone: str = "Europe/Berlin"
    now: datetime = datetime(2025, 3, 1, 3, 0, tzinfo=UTC)


def compiled(tree: Any, scope: Scope | None = None) -> tuple[str, list[Any]]:
    params: list[Any] = []
    sql = compile_filter(Args.model_validate({"filter": tree}).filter, params, scope or Scope())
    return sql, params


def retry_message(tree: Any) -> str:
    with pytest.raises(ToolRetry) as caught:
        REGISTRY.validate("search", {"filter": tree})
    return caught.value.message


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def test_values_are_bound_never_formatted() -> None:
    evil = "'; DROP TABLE memories; --"
    tree = {
        "any": [
            {"field": "content", "op": "contains", "value": evil},
            {"field": "person", "op": "eq", "value": evil},
            {"field": "author", "op": "in", "value": [evil, "Anna"]},
            {"field": "tags", "op": "contains", "value": evil},
        ]
    }
    sql, params = compiled(tree)
    assert "DROP" not in sql and "'; " not in sql
    assert re.findall(r"\$(\d+)", sql) == [str(n) for n in range(1, len(params) + 1)]
    assert any(evil in str(p) for p in params)


def test_like_wildcards_in_content_are_escaped() -> None:
    _, params = compiled({"field": "content", "op": "contains", "value": "50%_off\\"})
    assert params == ["%50\\%\\_off\\\\%"]


@pytest.mark.parametrize(
    ("tree", "expected"),
    [
        ({"field": "household_id", "op": "eq", "value": 1}, "filter.condition.field"),
        ({"field": "amount", "op": "contains", "value": "1"}, "op 'contains' does not apply to field 'amount'"),
        ({"field": "amount", "op": "gt", "value": "lots"}, "amount needs a number"),
        ({"field": "amount", "op": "gt", "value": True}, "amount needs a number"),
        ({"field": "amount", "op": "gt", "value": 1e15}, "below"),
        ({"field": "amount", "op": "between", "value": [5, 1]}, "low <= high"),
        ({"field": "occurred_at", "op": "gte", "value": "last tuesday"}, "not an ISO 8601 date"),
        ({"field": "occurred_at", "op": "period", "value": "last_decade"}, "op 'period' takes one of"),
        ({"field": "currency", "op": "eq", "value": "EURO"}, "3-letter ISO 4217"),
        ({"field": "kind", "op": "eq", "value": "gossip"}, "kind must be one of"),
        ({"field": "visibility", "op": "eq", "value": "public"}, "'household' or 'private'"),
        ({"field": "amount", "op": "in", "value": 5}, "takes a list"),
        ({"field": "amount", "op": "eq", "value": [5]}, "takes a single value"),
        ({"field": "amount", "op": "exists", "value": "yes"}, "true or false"),
        ({"field": "person", "op": "eq", "value": "x" * 201}, "at most 200 characters"),
        ({"field": "amount", "op": "in", "value": list(range(51))}, "at most 50 items"),
        ({"field": "person", "op": "eq", "value": "Anna", "sql": "1=1"}, "filter.condition.sql"),
        ({"every": []}, "filter.condition"),
        ("amount > 5", "a filter node is an object"),
        ({"all": []}, "filter.all"),
    ],
)
def test_violations_go_back_to_the_model(tree: Any, expected: str) -> None:
    assert expected in retry_message(tree)


def test_depth_and_size_are_bounded() -> None:
    leaf = {"field": "amount", "op": "exists"}
    assert compiled({"not": {"all": [{"any": [leaf]}]}})[0]  # depth 4 is fine
    assert "nested 5 levels" in retry_message({"not": {"not": {"all": [{"any": [leaf]}]}}})
    assert compiled({"all": [leaf] * 31})[0]  # 32 nodes
    assert "33 nodes" in retry_message({"all": [leaf] * 32})
    assert "34 nodes" in retry_message({"all": [{"any": [leaf] * 16}, {"any": [leaf] * 15}]})
    deep: dict[str, Any] = leaf
    for _ in range(300):
        deep = {"not": deep}
    with pytest.raises(ToolRetry):
        REGISTRY.validate("search", {"filter": deep})


def test_compiling_an_unvalidated_tree_still_checks_limits() -> None:
    leaf = Args.model_validate({"filter": {"field": "amount", "op": "exists"}}).filter
    from tools.filters import AllOf

    too_many = AllOf.model_construct(all_=[leaf] * 40)
    with pytest.raises(ToolRetry, match="41 nodes"):
        compile_filter(too_many, [], Scope())


@pytest.mark.parametrize(
    ("timezone", "now", "period", "start", "end"),
    [
        # 03:00 UTC on 1 March is already March in Berlin but still February in New York.
        ("Europe/Berlin", utc(2025, 3, 1, 3), "this_month", utc(2025, 2, 28, 23), utc(2025, 3, 31, 22)),
        ("Europe/Berlin", utc(2025, 3, 1, 3), "last_month", utc(2025, 1, 31, 23), utc(2025, 2, 28, 23)),
        ("America/New_York", utc(2025, 3, 1, 3), "this_month", utc(2025, 2, 1, 5), utc(2025, 3, 1, 5)),
        ("America/New_York", utc(2025, 3, 1, 3), "last_month", utc(2025, 1, 1, 5), utc(2025, 2, 1, 5)),
        ("Europe/Berlin", utc(2025, 3, 1, 3), "today", utc(2025, 2, 28, 23), utc(2025, 3, 1, 23)),
        ("America/New_York", utc(2025, 3, 1, 3), "today", utc(2025, 2, 28, 5), utc(2025, 3, 1, 5)),
        ("America/New_York", utc(2025, 3, 1, 3), "yesterday", utc(2025, 2, 27, 5), utc(2025, 2, 28, 5)),
        # Weeks start on Monday: Saturday 1 March 2025 belongs to the week of Monday 24 February.
        ("Europe/Berlin", utc(2025, 3, 1, 3), "this_week", utc(2025, 2, 23, 23), utc(2025, 3, 2, 23)),
        ("Europe/Berlin", utc(2025, 3, 1, 3), "last_week", utc(2025, 2, 16, 23), utc(2025, 2, 23, 23)),
        ("America/New_York", utc(2025, 3, 1, 3), "this_week", utc(2025, 2, 24, 5), utc(2025, 3, 3, 5)),
        # January: last month is the previous year's December.
        ("Europe/Berlin", utc(2025, 1, 15, 12), "last_month", utc(2024, 11, 30, 23), utc(2024, 12, 31, 23)),
        ("Europe/Berlin", utc(2025, 1, 1, 0, 30), "this_year", utc(2024, 12, 31, 23), utc(2025, 12, 31, 23)),
        ("America/New_York", utc(2025, 1, 1, 0, 30), "this_year", utc(2024, 1, 1, 5), utc(2025, 1, 1, 5)),
        ("America/New_York", utc(2025, 1, 1, 0, 30), "last_year", utc(2023, 1, 1, 5), utc(2024, 1, 1, 5)),
        # Daylight saving: the day clocks go forward has 23 hours.
        ("Europe/Berlin", utc(2025, 3, 31, 10), "yesterday", utc(2025, 3, 29, 23), utc(2025, 3, 30, 22)),
        ("America/New_York", utc(2025, 3, 10, 12), "yesterday", utc(2025, 3, 9, 5), utc(2025, 3, 10, 4)),
        ("Europe/Berlin", utc(2025, 3, 1, 3), "last_7_days", utc(2025, 2, 22, 23), utc(2025, 3, 1, 23)),
        ("Europe/Berlin", utc(2025, 3, 1, 3), "last_30_days", utc(2025, 1, 30, 23), utc(2025, 3, 1, 23)),
    ],
)
def test_period_ranges(timezone: str, now: datetime, period: str, start: datetime, end: datetime) -> None:
    assert period_range(period, now, timezone) == (start, end)


def test_every_period_is_a_half_open_range_containing_or_preceding_now() -> None:
    now = utc(2025, 6, 15, 12)
    for period in PERIODS:
        start, end = period_range(period, now, "America/New_York")
        assert start < end
        assert start <= now


def test_dates_cover_whole_days_and_naive_times_are_local() -> None:
    scope = Scope(timezone="America/New_York")
    _, params = compiled({"field": "occurred_at", "op": "lte", "value": "2025-03-03"}, scope)
    assert params == [utc(2025, 3, 4, 5)]
    sql, params = compiled({"field": "occurred_at", "op": "gt", "value": "2025-03-03"}, scope)
    assert ">=" in sql and params == [utc(2025, 3, 4, 5)]
    _, params = compiled({"field": "occurred_at", "op": "eq", "value": "2025-07-04"}, scope)
    assert params == [utc(2025, 7, 4, 4), utc(2025, 7, 5, 4)]
    _, params = compiled({"field": "occurred_at", "op": "lt", "value": "2025-03-03T09:30"}, scope)
    assert params == [utc(2025, 3, 3, 14, 30)]
    _, params = compiled({"field": "created_at", "op": "gte", "value": "2025-03-03T09:30:00+01:00"}, scope)
    assert params == [utc(2025, 3, 3, 8, 30)]
    _, params = compiled({"field": "occurred_at", "op": "between", "value": ["2025-03-01", "2025-03-31"]}, scope)
    assert params == [utc(2025, 3, 1, 5), utc(2025, 4, 1, 4)]
    with pytest.raises(ToolRetry, match="earlier, later"):
        compiled({"field": "occurred_at", "op": "between", "value": ["2025-03-31", "2025-03-01"]}, scope)


def _sample_value(field: str, op: str) -> Any:
    kind = _FIELDS[field].kind
    single = {
        "amount": "12.50",
        "time": "2025-03-01",
        "currency": "eur",
        "visibility": "household",
        "author": "Anna",
    }.get(kind, "note" if field == "kind" else "groceries")
    if op == "exists":
        return False
    if op == "period":
        return "last_month"
    if op == "in":
        return [single, single]
    if op == "between":
        return ["1", "99.99"] if kind == "amount" else ["2025-01-01", "2025-03-01T12:00"]
    return single


EVERY_FIELD_AND_OP = [(field, op) for field, spec in _FIELDS.items() for op in spec.ops]


@pytest.mark.parametrize(("field", "op"), EVERY_FIELD_AND_OP)
async def test_every_allowed_field_and_op_runs_in_postgres(
    db: Database, admin_conn: asyncpg.Connection, field: str, op: str
) -> None:
    family = await make_family(admin_conn, "Anna")
    await add_memory(
        admin_conn,
        family,
        "Anna",
        "Groceries at Rewe",
        amount="12.50",
        currency="EUR",
        occurred_at=utc(2025, 2, 10, 12),
        kind="expense",
        category="groceries",
        tags=["groceries"],
    )
    tree = {"not": {"field": field, "op": op, "value": _sample_value(field, op)}}
    result = await call(db, family, "Anna", "search", {"filter": tree}, now=utc(2025, 3, 1, 3))
    assert result["count"] in (0, 1)


async def test_filters_select_the_right_rows(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna", "Ben", timezone="America/New_York")
    rows = {
        "discount": await add_memory(
            admin_conn,
            family,
            "Anna",
            "Shoes at 50% off",
            amount="40.00",
            currency="USD",
            occurred_at=utc(2025, 3, 4, 4, 30),
            kind="expense",
            category="clothes",
            tags=["shoes", "sale"],
        ),
        "plain": await add_memory(
            admin_conn,
            family,
            "Ben",
            "Shoes at 500 off",
            amount="90.00",
            currency="USD",
            occurred_at=utc(2025, 3, 4, 5, 30),
            kind="expense",
            category="clothes",
            person="ben",
        ),
        "note": await add_memory(admin_conn, family, "Ben", "Ben likes blue", kind="fact", person="Ben"),
    }

    async def ids(tree: Any) -> set[int]:
        result = await call(db, family, "Anna", "search", {"filter": tree, "limit": 50}, now=utc(2025, 3, 10, 12))
        return {memory["memory_id"] for memory in result["memories"]}

    assert await ids({"field": "content", "op": "contains", "value": "50%"}) == {rows["discount"]}
    # 04:30 UTC on 4 March is still 3 March in New York.
    assert await ids({"field": "occurred_at", "op": "eq", "value": "2025-03-03"}) == {rows["discount"]}
    assert await ids({"field": "occurred_at", "op": "lte", "value": "2025-03-03"}) == {rows["discount"]}
    assert await ids({"field": "person", "op": "eq", "value": "BEN"}) == {rows["plain"], rows["note"]}
    assert await ids({"field": "author", "op": "eq", "value": "ben"}) == {rows["plain"], rows["note"]}
    assert await ids({"field": "author", "op": "ne", "value": "Ben"}) == {rows["discount"]}
    assert await ids({"field": "tags", "op": "contains", "value": "Sale"}) == {rows["discount"]}
    assert await ids({"field": "tags", "op": "in", "value": ["shoes", "boots"]}) == {rows["discount"]}
    assert await ids({"field": "tags", "op": "exists", "value": False}) == {rows["plain"], rows["note"]}
    assert await ids({"field": "amount", "op": "between", "value": [40, "90"]}) == {rows["discount"], rows["plain"]}
    assert await ids({"field": "amount", "op": "exists", "value": False}) == {rows["note"]}
    assert await ids({"field": "currency", "op": "in", "value": ["usd"]}) == {rows["discount"], rows["plain"]}
    # "not" keeps rows where the field is missing: the note has no category.
    assert await ids({"not": {"field": "category", "op": "eq", "value": "Clothes"}}) == {rows["note"]}
    assert await ids(
        {
            "all": [
                {"field": "kind", "op": "eq", "value": "expense"},
                {
                    "any": [
                        {"field": "amount", "op": "gt", "value": 50},
                        {"field": "tags", "op": "contains", "value": "sale"},
                    ]
                },
            ]
        }
    ) == {rows["discount"], rows["plain"]}
    assert await ids({"field": "occurred_at", "op": "period", "value": "this_month"}) == {
        rows["discount"],
        rows["plain"],
    }
