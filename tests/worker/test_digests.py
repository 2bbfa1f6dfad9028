"""Digests: the numbers are SQL's, the words the model's (or the template's), sent once per period, on the
household's own clock and only the digests it chose."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
import pytest

from engine.digests import template
from engine.settings import Settings
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, Scripted
from tests.system import System, running_system
from tests.tools import Family, add_memory
from tests.tools.test_charts import png_size
from tools.infra.queue import digest_job_id
from tools.storage import digests, households
from tools.storage.digests import Occurrence
from tools.storage.outbox import OutboxRow
from worker.jobs import run_digest, sweep_digests

LONG_AGO = datetime(2000, 1, 1, tzinfo=UTC)
FAMILY_NAME = "Digest family"
MARCH_1_0800_BERLIN = datetime(2025, 3, 1, 7, tzinfo=UTC)
CATEGORIES = ["groceries", "rent", "transport", "kita", "pharmacy"]


@pytest.fixture(autouse=True)
async def forget_digest_families(admin_conn: asyncpg.Connection) -> AsyncIterator[None]:
    """Their schedules count from long ago: left behind, a later test's worker would send them real digests."""
    yield
    await admin_conn.execute("DELETE FROM households WHERE name = $1", FAMILY_NAME)


class Recorder:
    def __init__(self) -> None:
        self.rows: list[OutboxRow] = []

    async def send(self, row: OutboxRow) -> None:
        self.rows.append(row)


async def household(system: System, timezone: str, *members: str, **choices: dict[str, Any]) -> Family:
    """A household whose default schedule counts from long ago, with the digest choices given per kind."""
    household_id = await households.create_household(system.admin, FAMILY_NAME, timezone)
    await system.admin.execute("UPDATE households SET created_at = $2 WHERE id = $1", household_id, LONG_AGO)
    ids = {}
    for name in members:
        ids[name], _ = await households.add_member(system.admin, household_id, name, timezone=timezone)
    async with system.deps.db.household(household_id) as conn:
        for kind, fields in choices.items():
            await digests.configure(conn, household_id, kind, now=LONG_AGO, **fields)
    return Family(household_id, ids, timezone)


def context(system: System) -> tuple[dict[str, Any], Recorder]:
    recorder = Recorder()
    return {"deps": dataclasses.replace(system.deps, senders={"web": recorder})}, recorder


async def due_jobs(system: System, family: Family, now: datetime) -> list[tuple[Any, ...]]:
    """The run_digest arguments of this household's due digests (other tests' households are ignored)."""
    async with system.deps.db.unscoped() as conn:
        found = await digests.due(conn, now)
    return [
        (family.household_id, o.kind, o.period_start.isoformat(), o.period_end.isoformat(), o.due_at.isoformat())
        for household_id, o in found
        if household_id == family.household_id
    ]


async def seed_month(admin: asyncpg.Connection, family: Family) -> None:
    """Eighty expenses through February in Berlin, plus rows that must not count."""
    rng = random.Random(20250301)
    start = datetime(2025, 1, 31, 23, tzinfo=UTC)  # 1 February 00:00 in Berlin
    for number in range(80):
        when = start + timedelta(minutes=rng.randrange(0, 28 * 24 * 60))
        currency = "USD" if number % 7 == 0 else "EUR"
        amount = f"{rng.randrange(1, 50000) / 100:.2f}"
        await add_memory(
            admin,
            family,
            "Anna",
            f"expense {number}",
            amount=amount,
            currency=currency,
            occurred_at=when,
            kind="expense",
            category=rng.choice(CATEGORIES),
        )
    counted_edges = [datetime(2025, 1, 31, 23, 30, tzinfo=UTC), datetime(2025, 2, 28, 22, 59, tzinfo=UTC)]
    for when in counted_edges:  # 00:30 on 1 February and 23:59 on 28 February, Berlin time
        await add_memory(admin, family, "Ben", "edge", amount="0.01", currency="EUR", occurred_at=when, kind="expense")
    outside = [datetime(2025, 1, 31, 22, 59, tzinfo=UTC), datetime(2025, 2, 28, 23, 0, tzinfo=UTC)]
    for when in outside:
        await add_memory(
            admin,
            family,
            "Ben",
            "out",
            amount="99.00",
            currency="EUR",
            occurred_at=when,
            kind="expense",
            category="rent",
        )
    feb = datetime(2025, 2, 10, 12, tzinfo=UTC)
    await add_memory(admin, family, "Ben", "salary", amount="3000.00", currency="EUR", occurred_at=feb, kind="income")
    await add_memory(
        admin,
        family,
        "Ben",
        "secret gift",
        amount="70.00",
        currency="EUR",
        occurred_at=feb,
        kind="expense",
        category="gifts",
        visibility="private",
    )
    deleted = await add_memory(
        admin, family, "Ben", "mistake", amount="5.00", currency="EUR", occurred_at=feb, kind="expense", category="rent"
    )
    await admin.execute("UPDATE memories SET deleted_at = now() WHERE id = $1", deleted)


async def sql_truth(admin: asyncpg.Connection, household_id: int) -> set[tuple[str, str, Decimal, int]]:
    rows = await admin.fetch(
        """SELECT coalesce(ai_understanding ->> 'category', 'uncategorised') AS category, currency::text AS currency,
                  sum(amount) AS total, count(*) AS n
           FROM memories
           WHERE household_id = $1 AND deleted_at IS NULL AND visibility = 'household' AND amount IS NOT NULL
             AND ai_understanding ->> 'kind' = 'expense'
             AND occurred_at >= '2025-02-01 00:00'::timestamp AT TIME ZONE 'Europe/Berlin'
             AND occurred_at < '2025-03-01 00:00'::timestamp AT TIME ZONE 'Europe/Berlin'
           GROUP BY 1, 2""",
        household_id,
    )
    return {(r["category"], r["currency"], r["total"], r["n"]) for r in rows}


async def digest_run(admin: asyncpg.Connection, household_id: int) -> dict[str, Any]:
    row = await admin.fetchrow("SELECT * FROM digest_runs WHERE household_id = $1", household_id)
    return {**dict(row), "facts": json.loads(row["facts"])}  # the owner connection has no JSON codec


def as_truth(facts: dict[str, Any]) -> set[tuple[str, str, Decimal, int]]:
    return {(e["category"], e["currency"], Decimal(e["total"]), e["count"]) for e in facts["expenses"]}


async def test_monthly_digest_equals_the_sql_truth(settings: Settings, fake_llm: FakeOpenAI, admin_conn) -> None:
    seen: list[dict[str, Any]] = []

    def phrase(request: ChatRequest) -> Scripted:
        seen.append(json.loads(request.last_user_text))
        return Scripted(content="Your February in numbers — see the chart.")

    fake_llm.script(phrase)
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system:
        family = await household(system, "Europe/Berlin", "Anna", "Ben")
        await seed_month(admin_conn, family)
        ctx, recorder = context(system)

        assert await due_jobs(system, family, MARCH_1_0800_BERLIN - timedelta(minutes=1)) == []
        [job] = await due_jobs(system, family, MARCH_1_0800_BERLIN)
        await sweep_digests(ctx, now=MARCH_1_0800_BERLIN)
        occurrence = Occurrence("monthly", date(2025, 2, 1), date(2025, 3, 1), MARCH_1_0800_BERLIN)
        job_id = digest_job_id(family.household_id, occurrence.kind, occurrence.period_start)
        assert job_id == f"digest:{family.household_id}:monthly:2025-02-01"
        assert await system.redis.exists(f"arq:job:{job_id}")
        assert await run_digest(ctx, *job) == "sent"

    truth = await sql_truth(admin_conn, family.household_id)
    run = await digest_run(admin_conn, family.household_id)
    assert len(truth) >= 10 and as_truth(run["facts"]) == truth
    assert ("uncategorised", "EUR", Decimal("0.02"), 2) in truth
    totals: dict[str, tuple[Decimal, int]] = {}
    for _, currency, total, count in truth:
        before = totals.get(currency, (Decimal(0), 0))
        totals[currency] = (before[0] + total, before[1] + count)
    assert {t["currency"]: (Decimal(t["total"]), t["count"]) for t in run["facts"]["totals"]} == totals
    assert seen == [run["facts"]]  # the model phrased exactly these numbers
    assert (run["phrasing"], run["period_start"], run["period_end"]) == ("llm", date(2025, 2, 1), date(2025, 3, 1))

    sent = sorted(recorder.rows, key=lambda r: r.user_id)
    assert [r.user_id for r in sent] == sorted(family.members.values())
    assert {r.text for r in sent} == {"Your February in numbers — see the chart."}
    [media_id] = run["media_ids"]
    assert all(
        r.payload == {"kind": "digest", "digest": "monthly", "period_start": "2025-02-01", "media_ids": [media_id]}
        for r in sent
    )
    chart = await admin_conn.fetchrow("SELECT household_id, data, description FROM media WHERE id = $1", media_id)
    assert chart["household_id"] == family.household_id and png_size(chart["data"]) == (800, 500)
    assert chart["description"].startswith(run["facts"]["title"] + ": ")  # what it shows, in words: an alt text


async def test_llm_failure_falls_back_to_the_template(settings: Settings, fake_llm: FakeOpenAI, admin_conn) -> None:
    fake_llm.script(lambda request: Scripted(content="model is down", status=503))
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system:
        family = await household(system, "Europe/Berlin", "Anna")
        for amount, category, currency in (
            ("35.50", "groceries", "EUR"),
            ("12.25", "groceries", "EUR"),
            ("20.00", "books", "USD"),
        ):
            await add_memory(
                admin_conn,
                family,
                "Anna",
                "x",
                amount=amount,
                currency=currency,
                kind="expense",
                category=category,
                occurred_at=datetime(2025, 2, 14, 12, tzinfo=UTC),
            )
        ctx, recorder = context(system)
        [job] = await due_jobs(system, family, MARCH_1_0800_BERLIN)
        assert await run_digest(ctx, *job) == "sent"
    run = await digest_run(admin_conn, family.household_id)
    [row] = recorder.rows
    assert run["phrasing"] == "template" and row.text == template(run["facts"])
    assert row.text.splitlines() == [
        "Expenses in February 2025",
        "groceries: 47.75 EUR",
        "books: 20.00 USD",
        "Total: 47.75 EUR, 20.00 USD",
    ]


async def test_two_workers_send_a_digest_once(settings: Settings, fake_llm: FakeOpenAI, admin_conn) -> None:
    fake_llm.script(lambda request: Scripted(content="Once.", delay_s=0.3))  # both runs are mid-way together
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system:
        family = await household(system, "Europe/Berlin", "Anna", "Ben", "Cleo")
        ctx, recorder = context(system)
        await asyncio.gather(sweep_digests(ctx, now=MARCH_1_0800_BERLIN), sweep_digests(ctx, now=MARCH_1_0800_BERLIN))
        keys = await system.redis.keys(f"arq:job:digest:{family.household_id}:*")
        assert keys == [f"arq:job:digest:{family.household_id}:monthly:2025-02-01".encode()]
        [job] = await due_jobs(system, family, MARCH_1_0800_BERLIN)
        results = await asyncio.gather(run_digest(ctx, *job), run_digest(ctx, *job))
        assert sorted(results) == ["already sent", "sent"]
        assert await run_digest(ctx, *job) == "already sent"  # a restart, a retried job
        assert await due_jobs(system, family, MARCH_1_0800_BERLIN + timedelta(hours=1)) == []
    assert (
        await admin_conn.fetchval("SELECT count(*) FROM digest_runs WHERE household_id = $1", family.household_id) == 1
    )
    assert await admin_conn.fetchval("SELECT count(*) FROM outbox WHERE household_id = $1", family.household_id) == 3
    assert await admin_conn.fetchval("SELECT count(*) FROM media WHERE household_id = $1", family.household_id) == 0
    assert sorted(r.text for r in recorder.rows) == ["Once."] * 3


async def test_the_household_clock_and_its_choice_of_digests(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn
) -> None:
    fake_llm.script(lambda request: Scripted(status=500))
    seven_in_shanghai = datetime(2025, 5, 31, 23, tzinfo=UTC)  # 1 June, 07:00 in Shanghai
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system:
        family = await household(
            system,
            "Asia/Shanghai",
            "Li",
            "Wei",
            monthly={"enabled": False},
            morning={"enabled": True, "at_time": time(7)},
            weekly={"enabled": True, "weekday": 7, "at_time": time(20)},
        )
        await admin_conn.execute(
            "INSERT INTO reminders (household_id, recipient_ids, text, timezone, next_fire_at) "
            "VALUES ($1, $2, $3, $4, $5)",
            family.household_id,
            [family.id("Wei")],
            "Take the bins out",
            "Asia/Shanghai",
            datetime(2025, 6, 1, 1, 30, tzinfo=UTC),
        )
        await add_memory(
            admin_conn, family, "Li", "Swimming lesson", kind="plan", occurred_at=datetime(2025, 6, 1, 8, tzinfo=UTC)
        )
        await add_memory(
            admin_conn, family, "Li", "Later plan", kind="plan", occurred_at=datetime(2025, 6, 2, 16, tzinfo=UTC)
        )
        ctx, recorder = context(system)

        assert await due_jobs(system, family, seven_in_shanghai - timedelta(minutes=1)) == []
        [morning] = await due_jobs(system, family, seven_in_shanghai)  # the 1st, but the monthly digest is off
        assert morning[1:3] == ("morning", "2025-06-01")
        assert await run_digest(ctx, *morning) == "sent"
        # Sunday 1 June, 20:00 in Shanghai: the weekly summary of 25–31 May.
        [weekly] = await due_jobs(system, family, datetime(2025, 6, 1, 12, tzinfo=UTC))
        assert weekly[1:4] == ("weekly", "2025-05-25", "2025-06-01")
        assert await run_digest(ctx, *weekly) == "sent"
        # A morning with nothing on sends nothing, and is not tried again.
        [quiet] = await due_jobs(system, family, seven_in_shanghai + timedelta(days=1))
        assert await run_digest(ctx, *quiet) == "skipped"
        assert await due_jobs(system, family, seven_in_shanghai + timedelta(days=1, minutes=5)) == []

    texts = {}
    for row in recorder.rows:
        texts.setdefault(row.payload["digest"], set()).add(row.text)
    assert texts == {
        "morning": {"Today, Sunday 01 June 2025\n- 09:30 Take the bins out (Wei)\nPlans:\n- 16:00 Swimming lesson"},
        "weekly": {"The week 25 May to 31 May 2025\nNo expenses were recorded."},
    }
    assert len(recorder.rows) == 4
