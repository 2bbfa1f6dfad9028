"""Budgets through the registry: the month's spending and what is left from SQL, and the 80 % / 100 % alerts —
once per threshold per month, to each adult on their own channel, decided in the transaction that stores the
expense, also when two workers store expenses at the same time."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest

from tools.errors import ToolRetry
from tools.storage.database import Database

from . import REGISTRY, Family, add_memory, call, make_family, tool_context

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def expense(amount: str, category: str = "groceries", currency: str = "EUR", **more: Any) -> dict[str, Any]:
    return {"content": f"groceries {amount}", "kind": "expense", "category": category, "amount": amount,
            "currency": currency, **more}  # fmt: skip


async def alerts(admin: asyncpg.Connection, family: Family) -> list[tuple[int, str]]:
    """The thresholds reached and the sums the adults were told (one row per adult each; here they all see the
    same expenses)."""
    rows = await admin.fetch(
        """SELECT DISTINCT month, threshold, spent::text AS spent FROM budget_alerts WHERE household_id = $1
           ORDER BY month, threshold""",
        family.household_id,
    )
    return [(r["threshold"], r["spent"]) for r in rows]


async def alert_messages(admin: asyncpg.Connection, family: Family) -> list[tuple[int, str, str, int]]:
    rows = await admin.fetch(
        """SELECT user_id, channel, text, (payload ->> 'threshold')::int AS threshold FROM outbox
           WHERE household_id = $1 AND payload ->> 'kind' = 'budget_alert' ORDER BY id""",
        family.household_id,
    )
    return [(r["user_id"], r["channel"], r["text"], r["threshold"]) for r in rows]


async def family_with_budget(admin: asyncpg.Connection, db: Database) -> Family:
    family = await make_family(admin, "Anna", "Ben", "Kid")
    await admin.execute("UPDATE users SET role = 'child' WHERE id = $1", family.id("Kid"))
    await admin.execute("UPDATE users SET locale = 'de' WHERE id = $1", family.id("Ben"))
    await admin.execute(
        "INSERT INTO user_identities (household_id, user_id, channel, external_id) VALUES ($1, $2, 'telegram', $3)",
        family.household_id,
        family.id("Ben"),
        f"tg-{family.household_id}",
    )
    await call(db, family, "Anna", "set_budget", {"category": "groceries", "amount": 400, "currency": "€"}, now=NOW)
    return family


async def test_status_counts_this_months_expenses_of_the_category_and_currency(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    family = await family_with_budget(admin_conn, db)
    for amount, category, currency, when in [
        ("100.50", "groceries", "EUR", datetime(2026, 11, 3, tzinfo=UTC)),
        ("20", "groceries", "EUR", datetime(2026, 10, 31, 22, 30, tzinfo=UTC)),  # 23:30 in Berlin: October
        ("30", "groceries", "USD", datetime(2026, 11, 3, tzinfo=UTC)),
        ("40", "fuel", "EUR", datetime(2026, 11, 3, tzinfo=UTC)),
    ]:
        await add_memory(admin_conn, family, "Ben", "x", amount=amount, currency=currency, occurred_at=when,
                         kind="expense", category=category)  # fmt: skip
    status = await call(db, family, "Ben", "budget_status", {"category": "groceries"}, now=NOW)
    assert isinstance(status["budgets"][0].pop("budget_id"), int)  # what remove_budget takes
    assert status["budgets"] == [
        {
            "category": "groceries",
            "currency": "EUR",
            "amount": "400.00",
            "spent": "100.50",
            "left": "299.50",
            "percent": 25,
            "month": "2026-11",
        }  # fmt: skip
    ]
    changed = await call(db, family, "Ben", "set_budget", {"category": "Groceries", "amount": "450", "currency": "EUR"})
    assert changed["amount"] == "450.00" and changed["previous_amount"] == "400.00"
    with pytest.raises(ToolRetry, match="no budget for 'fuel'; budgets: groceries"):
        await call(db, family, "Ben", "budget_status", {"category": "fuel"}, now=NOW)
    for args in ({"category": "groceries", "amount": 0, "currency": "EUR"}, {"category": "x", "amount": 5}):
        with pytest.raises(ToolRetry):
            await call(db, family, "Ben", "set_budget", args)


async def test_each_threshold_alerts_the_adults_once_a_month(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await family_with_budget(admin_conn, db)
    await call(db, family, "Kid", "store", expense("300"), now=NOW)
    assert await alerts(admin_conn, family) == []
    await call(db, family, "Kid", "store", expense("20"), now=NOW)  # 320 of 400: 80 %
    await call(db, family, "Anna", "store", expense("10"), now=NOW)  # still above 80 %, below 100 %: nothing new
    assert await alerts(admin_conn, family) == [(80, "320.00")]
    messages = await alert_messages(admin_conn, family)
    assert [(user, channel, threshold) for user, channel, _, threshold in messages] == [
        (family.id("Anna"), "web", 80),
        (family.id("Ben"), "telegram", 80),
    ]
    assert "320.00" in messages[0][2] and "400.00 EUR groceries" in messages[0][2] and "ausgegeben" in messages[1][2]

    await call(db, family, "Anna", "store", expense("9.99", category="fuel"), now=NOW)
    await call(db, family, "Anna", "store", expense("70", currency="USD"), now=NOW)
    assert len(await alerts(admin_conn, family)) == 1
    await call(db, family, "Anna", "store", expense("70"), now=NOW)  # 400: 100 %
    await call(db, family, "Anna", "store", expense("70"), now=NOW)
    assert await alerts(admin_conn, family) == [(80, "320.00"), (100, "400.00")]
    assert [m[3] for m in await alert_messages(admin_conn, family)] == [80, 80, 100, 100]

    next_month = datetime(2026, 12, 2, 12, tzinfo=UTC)
    await call(db, family, "Anna", "store", expense("500", occurred_at="2026-12-02"), now=next_month)
    assert [(t, s) for t, s in await alerts(admin_conn, family)][2:] == [(80, "500.00"), (100, "500.00")]
    assert [m[3] for m in await alert_messages(admin_conn, family)][4:] == [100, 100]  # one message: the highest


async def test_a_correction_that_raises_an_expense_alerts_too(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await family_with_budget(admin_conn, db)
    stored = await call(db, family, "Anna", "store", expense("40"), now=NOW)
    await call(db, family, "Anna", "update_memory_fields", {"memory_id": stored["memory_id"], "amount": "399"}, now=NOW)
    assert await alerts(admin_conn, family) == [(80, "399.00")]


async def test_a_back_dated_expense_does_not_alert(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await family_with_budget(admin_conn, db)
    await call(db, family, "Anna", "store", expense("450", occurred_at="2026-10-10"), now=NOW)
    assert await alerts(admin_conn, family) == []


async def test_an_expense_committed_while_another_waits_is_counted(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    """Worker A stores 200 and holds its transaction open; worker B stores 150 meanwhile. Neither alone reaches
    80 %, both together do: B waits for A's lock on the budget, then counts A's expense — one alert."""
    family = await family_with_budget(admin_conn, db)
    a_stored = asyncio.Event()
    a_may_commit = asyncio.Event()

    async def worker_a() -> None:
        async with tool_context(db, family, "Anna", now=NOW) as ctx:
            await REGISTRY.run(ctx, "store", REGISTRY.validate("store", expense("200")))
            a_stored.set()
            await a_may_commit.wait()

    async def worker_b() -> None:
        await a_stored.wait()
        await call(db, family, "Ben", "store", expense("150"), now=NOW)

    a, b = asyncio.create_task(worker_a()), asyncio.create_task(worker_b())
    while not (b.done() or await _waits_for_a_lock(admin_conn)):  # B is blocked on A's lock of the budget row
        await asyncio.sleep(0.01)
    a_may_commit.set()
    await asyncio.gather(a, b)
    assert await alerts(admin_conn, family) == [(80, "350.00")]


async def _waits_for_a_lock(admin: asyncpg.Connection) -> bool:
    return bool(
        await admin.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM budgets%'"
        )
    )


async def test_two_workers_storing_at_once_alert_exactly_once_per_threshold(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    family = await family_with_budget(admin_conn, db)

    async def worker(member: str) -> None:
        for _ in range(15):
            await call(db, family, member, "store", expense("15"), now=NOW)

    await asyncio.gather(worker("Anna"), worker("Ben"))  # 30 × 15 = 450 of 400
    assert [threshold for threshold, _ in await alerts(admin_conn, family)] == [80, 100]
    assert [spent for _, spent in await alerts(admin_conn, family)] == ["330.00", "405.00"]
    assert sorted(m[3] for m in await alert_messages(admin_conn, family)) == [80, 80, 100, 100]
