"""Firing reminders: on time in each member's timezone, exactly once through lost jobs, flushed Redis and racing
workers, held back by quiet hours, delivered to the member's channel."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest
from arq import Retry
from prometheus_client import REGISTRY as METRICS

from bot.channels.live import LiveReplySender
from engine.deps import Deps
from engine.settings import Settings
from tests.fakes.clock import ManualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.system import Family, System, accept_unqueued, make_family, running_system
from tools.context import ToolContext
from tools.infra.queue import reminder_job_id
from tools.registry import default_registry
from tools.storage.firings import Due
from worker.jobs import fire_reminder, sweep_reminders
from worker.main import create_worker
from worker.reminders import enqueue_fire, enqueue_for_message

REGISTRY = default_registry()


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(utc(2025, 1, 1))


@pytest.fixture
async def system(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection, clock: ManualClock
) -> AsyncIterator[System]:
    async with running_system(settings, fake_llm, admin_conn, worker=False, clock=clock) as running:
        yield running
    # The sweeper works across households: leave no active reminder for later tests' sweepers.
    await admin_conn.execute("UPDATE reminders SET status = 'cancelled', next_fire_at = NULL WHERE status = 'active'")


def worker_ctx(system: System) -> dict[str, Any]:
    """What a worker's jobs receive: the dependencies with the web channel's live sender."""
    live = LiveReplySender(system.redis)
    return {"deps": dataclasses.replace(system.deps, senders={"web": live, "terminal": live})}


async def schedule(
    deps: Deps, family: Family, member: str, *, inbox_id: int | None = None, **args: Any
) -> dict[str, Any]:
    household_id, user_id = family.household_id, family.user_ids[member]
    async with deps.db.household(household_id, user_id) as conn:
        timezone = await conn.fetchval("SELECT timezone FROM users WHERE id = $1", user_id)
        ctx = ToolContext(conn, household_id, user_id, timezone, deps.clock.now(), deps.embedder, inbox_id=inbox_id)
        return await REGISTRY.run(ctx, "schedule_reminder", REGISTRY.validate("schedule_reminder", args))


async def firings(admin: asyncpg.Connection, reminder_id: int) -> list[datetime]:
    rows = await admin.fetch(
        "SELECT fire_at FROM reminder_firings WHERE reminder_id = $1 ORDER BY fire_at", reminder_id
    )
    return [r["fire_at"] for r in rows]


async def sent(admin: asyncpg.Connection, reminder_id: int) -> list[asyncpg.Record]:
    return await admin.fetch(
        # Other tests make up reminder ids in payloads (buttons): only this reminder's household counts.
        """SELECT * FROM outbox WHERE (payload->>'reminder_id')::bigint = $1
           AND household_id = (SELECT household_id FROM reminders WHERE id = $1) ORDER BY id""",
        reminder_id,
    )


# case: (timezone, first time on that clock, RRULE, the UTC instants of the first three firings)
SERIES = {
    "berlin-spring": (
        "Europe/Berlin", "2025-03-23T02:30", "FREQ=WEEKLY;BYDAY=SU",
        [(2025, 3, 23, 1, 30), (2025, 3, 30, 1, 30), (2025, 4, 6, 0, 30)],  # 02:30 is in the gap on the 30th
    ),
    "berlin-autumn": (
        "Europe/Berlin", "2025-10-19T02:30", "FREQ=WEEKLY;BYDAY=SU",
        [(2025, 10, 19, 0, 30), (2025, 10, 26, 0, 30), (2025, 11, 2, 1, 30)],  # twice on the 26th: the first
    ),
    "berlin-daily": (
        "Europe/Berlin", "2025-03-29T07:30", "FREQ=DAILY",
        [(2025, 3, 29, 6, 30), (2025, 3, 30, 5, 30), (2025, 3, 31, 5, 30)],
    ),
    "new-york": (
        "America/New_York", "2025-11-01T09:00", "FREQ=DAILY",
        [(2025, 11, 1, 13), (2025, 11, 2, 14), (2025, 11, 3, 14)],
    ),
    "shanghai": (
        "Asia/Shanghai", "2025-01-01T08:00", "FREQ=MONTHLY;BYMONTHDAY=1",
        [(2025, 1, 1, 0), (2025, 2, 1, 0), (2025, 3, 1, 0)],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", SERIES)
async def test_repeating_reminders_fire_at_the_members_local_time(
    system: System, clock: ManualClock, case: str
) -> None:
    timezone, when, rule, expected_parts = SERIES[case]
    expected = [utc(*parts) for parts in expected_parts]
    family = await make_family(system.admin, f"Series {case}", {"Anna": timezone})
    ctx = worker_ctx(system)
    clock.set(expected[0] - timedelta(hours=1))
    reminder = await schedule(system.deps, family, "Anna", text="Water the plants", when=when, rrule=rule)
    rid = reminder["reminder_id"]

    for index, moment in enumerate(expected):
        clock.set(moment - timedelta(seconds=1))
        await sweep_reminders(ctx)
        assert await firings(system.admin, rid) == expected[:index], "fired early"
        clock.set(moment)
        await sweep_reminders(ctx)
        assert await firings(system.admin, rid) == expected[: index + 1]

    rows = await sent(system.admin, rid)
    assert [r["status"] for r in rows] == ["sent"] * len(expected)
    assert {r["text"] for r in rows} == {"⏰ Reminder: Water the plants"}


async def test_a_utc8_member_reminds_a_utc1_member_on_his_clock(system: System, clock: ManualClock) -> None:
    family = await make_family(system.admin, "Far apart", {"Li": "Asia/Shanghai", "Tom": "Europe/Berlin"})
    clock.set(utc(2025, 1, 12, 12))
    reminder = await schedule(
        system.deps,
        family,
        "Li",
        text="Take the bins out",
        when="2025-01-13T07:30",
        rrule="FREQ=WEEKLY;BYDAY=MO",
        recipient="Tom",
        timezone_of="recipient",
    )
    clock.set(utc(2025, 1, 13, 6, 30))  # 07:30 in Berlin, 14:30 in Shanghai

    assert (await sweep_reminders(worker_ctx(system)))["fired"] == 1

    [row] = await sent(system.admin, reminder["reminder_id"])
    assert (row["user_id"], row["channel"], row["recipient"]) == (
        family.user_ids["Tom"],
        "web",
        str(family.user_ids["Tom"]),
    )
    assert row["text"] == "⏰ Reminder: Take the bins out (from Li)"
    payload = json.loads(row["payload"])
    assert payload == {
        "kind": "reminder",
        "reminder_id": reminder["reminder_id"],
        "fire_at": "2025-01-13T06:30:00+00:00",
        "options": ["Snooze 15 min", "Done"],
    }
    assert row["status"] == "sent"
    assert await system.admin.fetchval(
        "SELECT next_fire_at FROM reminders WHERE id = $1", reminder["reminder_id"]
    ) == utc(2025, 1, 20, 6, 30)


async def test_redis_flushed_before_the_due_time_still_fires_once(system: System) -> None:
    clock = system.deps.clock
    assert isinstance(clock, ManualClock)
    clock.set(datetime.now(UTC).replace(microsecond=0))  # the job's deferral is real time
    family = await make_family(system.admin, "Flushed", {"Anna": "Europe/Berlin"})
    message = await accept_unqueued(system.deps, family, "Anna", "flush-1", "remind me in 90 seconds")
    due = clock.now() + timedelta(seconds=90)
    reminder = await schedule(system.deps, family, "Anna", inbox_id=message.id, text="Tea", when=due.isoformat())
    rid, hid = reminder["reminder_id"], family.household_id

    assert await enqueue_for_message(system.deps, message.id, hid) == 1
    job_id = reminder_job_id(rid, due)
    assert await system.redis.zscore("arq:queue", job_id) == due.timestamp() * 1000
    assert await enqueue_for_message(system.deps, message.id, hid) == 0  # one job per occurrence
    await system.redis.flushdb()
    clock.advance(seconds=91)
    ctx = worker_ctx(system)

    assert (await sweep_reminders(ctx))["fired"] == 1
    assert (await sweep_reminders(ctx))["fired"] == 0
    assert await fire_reminder(ctx, rid, hid, due.isoformat()) == "nothing to fire"
    assert await firings(system.admin, rid) == [due]
    assert [r["status"] for r in await sent(system.admin, rid)] == ["sent"]
    await system.admin.execute("UPDATE inbox SET status = 'done' WHERE id = $1", message.id)


async def test_two_workers_and_a_sweeper_deliver_each_reminder_once(
    system: System, settings: Settings, clock: ManualClock
) -> None:
    family = await make_family(system.admin, "Racing", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    clock.set(utc(2025, 6, 1, 11, 59))
    reminders = [
        await schedule(system.deps, family, "Anna", text=f"Task {n}", when="2025-06-01T13:59:30", recipient="household")
        for n in range(40)
    ]
    for reminder in reminders:
        due = Due(reminder["reminder_id"], family.household_id, utc(2025, 6, 1, 11, 59, 30))
        assert await enqueue_fire(system.deps, due)
    clock.set(utc(2025, 6, 1, 12))
    workers = [create_worker(settings, burst=True, handle_signals=False, clock=clock) for _ in range(2)]
    try:
        await asyncio.gather(*(w.main() for w in workers), sweep_reminders(worker_ctx(system)))
    finally:
        for worker in workers:
            await worker.close()

    ids = [r["reminder_id"] for r in reminders]
    counts = await system.admin.fetch(
        """SELECT r.id, r.status, (SELECT count(*) FROM reminder_firings f WHERE f.reminder_id = r.id) AS firings,
                  (SELECT count(*) FROM outbox o WHERE o.household_id = r.household_id
                     AND (o.payload->>'reminder_id')::bigint = r.id) AS messages,
                  (SELECT count(*) FROM outbox o WHERE o.household_id = r.household_id
                     AND (o.payload->>'reminder_id')::bigint = r.id AND o.status = 'sent') AS delivered
           FROM reminders r WHERE r.id = ANY($1::bigint[])""",
        ids,
    )
    assert len(counts) == 40
    assert {(r["status"], r["firings"], r["messages"], r["delivered"]) for r in counts} == {("done", 1, 2, 2)}


async def test_quiet_hours_hold_the_delivery_until_they_end(system: System, clock: ManualClock) -> None:
    family = await make_family(system.admin, "Quiet", {"Anna": "Europe/Berlin"})
    await system.admin.execute(
        "UPDATE users SET quiet_start = '22:00', quiet_end = '07:00' WHERE id = $1", family.user_ids["Anna"]
    )
    # In the future of the real clock too, since the held-back delivery job is deferred on it.
    clock.set(utc(2040, 1, 10, 12))
    reminder = await schedule(system.deps, family, "Anna", text="Check the heating", when="2040-01-10T23:00")
    clock.set(utc(2040, 1, 10, 22))

    observed = METRICS.get_sample_value("faa_reminder_lateness_seconds_count") or 0.0
    assert (await sweep_reminders(worker_ctx(system)))["fired"] == 1
    assert METRICS.get_sample_value("faa_reminder_lateness_seconds_count") == observed + 1  # /metrics shows it

    [row] = await sent(system.admin, reminder["reminder_id"])
    assert row["status"] == "pending" and row["next_attempt_at"] == utc(2040, 1, 11, 6)
    assert row["text"] == "⏰ Reminder: Check the heating — due 23:00, held back during your quiet hours"
    assert await system.redis.zscore("arq:queue", f"outbox:{row['id']}:0") == utc(2040, 1, 11, 6).timestamp() * 1000


async def test_after_downtime_a_repeating_reminder_fires_once_and_moves_on(system: System, clock: ManualClock) -> None:
    family = await make_family(system.admin, "Downtime", {"Anna": "Europe/Berlin"})
    clock.set(utc(2025, 1, 10, 12))
    reminder = await schedule(system.deps, family, "Anna", text="Pills", when="2025-01-11T08:00", rrule="FREQ=DAILY")
    clock.set(utc(2025, 1, 14, 9))  # three occurrences missed while no worker ran

    assert (await sweep_reminders(worker_ctx(system)))["fired"] == 1

    assert len(await sent(system.admin, reminder["reminder_id"])) == 1
    assert await system.admin.fetchval(
        "SELECT next_fire_at FROM reminders WHERE id = $1", reminder["reminder_id"]
    ) == utc(2025, 1, 15, 7)


async def test_a_snoozed_weekly_reminder_fires_again_and_keeps_its_schedule(system: System, clock: ManualClock) -> None:
    family = await make_family(system.admin, "Snooze", {"Anna": "Europe/Berlin"})
    clock.set(utc(2025, 1, 12, 12))
    reminder = await schedule(
        system.deps, family, "Anna", text="Bins", when="2025-01-13T07:30", rrule="FREQ=WEEKLY;BYDAY=MO"
    )
    rid = reminder["reminder_id"]
    ctx = worker_ctx(system)
    clock.set(utc(2025, 1, 13, 6, 30))
    await sweep_reminders(ctx)
    clock.advance(minutes=1)
    async with system.deps.db.household(family.household_id, family.user_ids["Anna"]) as conn:
        tool_ctx = ToolContext(
            conn, family.household_id, family.user_ids["Anna"], "Europe/Berlin", clock.now(), system.deps.embedder
        )
        await REGISTRY.run(
            tool_ctx, "snooze_reminder", REGISTRY.validate("snooze_reminder", {"reminder_id": rid, "minutes": 15})
        )
    clock.set(utc(2025, 1, 13, 6, 46))

    assert (await sweep_reminders(ctx))["fired"] == 1

    assert await firings(system.admin, rid) == [utc(2025, 1, 13, 6, 30), utc(2025, 1, 13, 6, 46)]
    assert await system.admin.fetchval("SELECT next_fire_at FROM reminders WHERE id = $1", rid) == utc(
        2025, 1, 20, 6, 30
    )


async def test_a_job_started_before_its_time_comes_back_later(system: System, clock: ManualClock) -> None:
    family = await make_family(system.admin, "Early", {"Anna": "Europe/Berlin"})
    clock.set(utc(2025, 1, 10, 12))
    reminder = await schedule(system.deps, family, "Anna", text="Early bird", when="2025-01-10T13:01")

    with pytest.raises(Retry):
        await fire_reminder(
            worker_ctx(system), reminder["reminder_id"], family.household_id, "2025-01-10T12:01:00+00:00"
        )
    assert await firings(system.admin, reminder["reminder_id"]) == []
