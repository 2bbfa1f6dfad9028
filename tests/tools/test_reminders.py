"""The reminder tools through the registry: times in the right timezone, clear messages for what cannot be done."""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import Any

import asyncpg
import pytest

from tools.errors import ToolRetry
from tools.storage.database import Database

from . import REGISTRY, call, make_family, tool_context

NOW = datetime(2025, 1, 10, 12, 0, tzinfo=UTC)  # a Friday


async def schedule(db: Database, family: Any, member: str, tz: str, **args: Any) -> dict[str, Any]:
    return await call(db, family, member, "schedule_reminder", args, now=NOW, timezone=tz)


async def row(admin: asyncpg.Connection, reminder_id: int) -> asyncpg.Record:
    return await admin.fetchrow("SELECT * FROM reminders WHERE id = $1", reminder_id)


async def test_a_naive_time_is_the_members_clock_and_an_aware_one_is_kept(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Anna")
    naive = await schedule(db, family, "Anna", "Europe/Berlin", text="Call the dentist", when="2025-01-11T09:00")
    aware = await schedule(db, family, "Anna", "Europe/Berlin", text="Call Bob", when="2025-01-11T09:00-05:00")

    assert naive["next_at"] == "2025-01-11T09:00+01:00" and naive["recipients"] == ["Anna"]
    assert (await row(admin_conn, naive["reminder_id"]))["next_fire_at"] == datetime(2025, 1, 11, 8, tzinfo=UTC)
    assert (await row(admin_conn, aware["reminder_id"]))["next_fire_at"] == datetime(2025, 1, 11, 14, tzinfo=UTC)
    assert aware["next_at"] == "2025-01-11T15:00+01:00"  # shown on the member's clock


async def test_a_utc8_member_reminds_a_utc1_member_on_either_clock(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Li", "Tom")
    await admin_conn.execute("UPDATE users SET timezone = 'Asia/Shanghai' WHERE id = $1", family.id("Li"))
    theirs = await schedule(
        db,
        family,
        "Li",
        "Asia/Shanghai",
        text="Take the bins out",
        when="2025-01-13T07:30",
        rrule="FREQ=WEEKLY;BYDAY=MO",
        recipient="tom",
        timezone_of="recipient",
    )
    mine = await schedule(db, family, "Li", "Asia/Shanghai", text="Call me", when="2025-01-13T09:00", recipient="Tom")

    assert theirs["timezone"] == "Europe/Berlin" and theirs["recipients"] == ["Tom"] and theirs["created_by"] == "Li"
    assert theirs["upcoming"] == ["2025-01-13T07:30+01:00", "2025-01-20T07:30+01:00", "2025-01-27T07:30+01:00"]
    first = await row(admin_conn, theirs["reminder_id"])
    assert first["next_fire_at"] == datetime(2025, 1, 13, 6, 30, tzinfo=UTC)
    assert first["recipient_ids"] == [family.id("Tom")]
    assert (await row(admin_conn, mine["reminder_id"]))["next_fire_at"] == datetime(2025, 1, 13, 1, tzinfo=UTC)


async def test_household_reminder_and_listing(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Anna", "Ben")
    rent = await schedule(
        db,
        family,
        "Anna",
        "Europe/Berlin",
        text="Pay rent",
        when="2025-02-01T10:00",
        rrule="FREQ=MONTHLY;BYMONTHDAY=1",
        recipient="household",
    )
    await schedule(db, family, "Anna", "Europe/Berlin", text="Anna only", when="2025-01-11T10:00")

    bens = await call(db, family, "Ben", "list_reminders", {}, now=NOW)
    assert [r["text"] for r in bens["reminders"]] == ["Pay rent"]
    assert bens["reminders"][0]["recipients"] == ["household"]
    assert (await row(admin_conn, rent["reminder_id"]))["for_household"] is True
    annas = await call(db, family, "Anna", "list_reminders", {}, now=NOW)
    assert [r["text"] for r in annas["reminders"]] == ["Anna only", "Pay rent"]


async def test_a_time_in_the_spring_gap_is_moved_and_the_model_is_told(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Anna")
    result = await call(
        db,
        family,
        "Anna",
        "schedule_reminder",
        {"text": "Night shift", "when": "2025-03-30T02:30"},
        now=NOW,
        timezone="Europe/Berlin",
    )
    assert result["next_at"] == "2025-03-30T03:30+02:00"
    assert "does not exist" in result["note"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"text": "Late", "when": "2025-01-09T09:00"}, "is in the past"),
        ({"text": "Who?", "when": "2025-01-11T09:00", "recipient": "Zoe"}, "no member named 'Zoe'"),
        ({"text": "Bad", "when": "2025-01-11T09:00", "rrule": "every monday"}, "give an RFC 5545 RRULE"),
        ({"text": "Fast", "when": "2025-01-11T09:00", "rrule": "FREQ=SECONDLY"}, "at most every"),
        ({"text": "Over", "when": "2025-01-11T09:00", "rrule": "FREQ=DAILY;COUNT=0"}, "COUNT takes 1..1000"),
        ({"text": "Gone", "when": "2025-01-11T09:00", "rrule": "FREQ=DAILY;UNTIL=20250110"}, "never fires"),
        ({"text": "Day", "when": "2025-01-11"}, "with a time of day"),
        (
            {"text": "All", "when": "2025-01-11T09:00", "recipient": "household", "timezone_of": "recipient"},
            "one named",
        ),
        ({"text": "", "when": "2025-01-11T09:00"}, "text"),
        # Issue 25: a rule that never fires scanned to the year 9999 on the event loop; BYHOUR=25 was a TypeError.
        (
            {"text": "x", "when": "2025-01-11T09:00", "rrule": "FREQ=MINUTELY;INTERVAL=15;BYMONTH=2;BYMONTHDAY=30"},
            "BYMONTHDAY=30 never falls in February",
        ),
        ({"text": "x", "when": "2025-01-13T09:00", "rrule": "FREQ=DAILY;INTERVAL=7;BYDAY=TU"}, "never fires between"),
        ({"text": "x", "when": "2025-01-11T09:00", "rrule": "FREQ=HOURLY;BYHOUR=25"}, "BYHOUR takes values 0..23"),
        ({"text": "x", "when": "9999-12-31T23:59"}, "give a date in the years 1900 to 2200"),
        ({"text": "x", "when": "0001-01-01T00:00"}, "give a date in the years 1900 to 2200"),
        ({"text": "x", "when": "2190-01-01T09:00"}, "within the next 50 years"),
    ],
)
async def test_impossible_schedules_go_back_to_the_model(db: Database, admin_conn, args: dict, message: str) -> None:
    family = await make_family(admin_conn, "Anna", "Ben")
    with pytest.raises(ToolRetry) as caught:
        await call(db, family, "Anna", "schedule_reminder", args, now=NOW, timezone="Europe/Berlin")
    assert message in caught.value.message
    assert await admin_conn.fetchval("SELECT count(*) FROM reminders WHERE household_id = $1", family.household_id) == 0


async def test_another_households_reminder_is_not_found(db: Database, admin_conn) -> None:
    ours, theirs = await make_family(admin_conn, "Anna"), await make_family(admin_conn, "Sam")
    foreign = await schedule(db, theirs, "Sam", "Europe/Berlin", text="Secret", when="2025-01-11T09:00")
    for name, extra in [("cancel_reminder", {}), ("snooze_reminder", {"minutes": 5}), ("complete_reminder", {})]:
        with pytest.raises(ToolRetry, match="there is no reminder"):
            await call(db, ours, "Anna", name, {"reminder_id": foreign["reminder_id"], **extra}, now=NOW)
    assert (await row(admin_conn, foreign["reminder_id"]))["status"] == "active"


async def test_cancel_snooze_and_complete(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Anna")
    once = await schedule(db, family, "Anna", "Europe/Berlin", text="Oven", when="2025-01-10T13:30")
    rid = once["reminder_id"]

    snoozed = await call(db, family, "Anna", "snooze_reminder", {"reminder_id": rid, "minutes": 15}, now=NOW)
    assert snoozed["next_at"] == "2025-01-10T13:15+01:00"
    until = await call(
        db,
        family,
        "Anna",
        "snooze_reminder",
        {"reminder_id": rid, "until": "2025-01-10T18:00"},
        now=NOW,
        timezone="Europe/Berlin",
    )
    assert until["next_at"] == "2025-01-10T18:00+01:00"
    with pytest.raises(ToolRetry, match="exactly one of minutes or until"):
        await call(
            db, family, "Anna", "snooze_reminder", {"reminder_id": rid, "minutes": 5, "until": "2025-01-11T09:00"}
        )
    with pytest.raises(ToolRetry, match="not in the future"):
        await call(db, family, "Anna", "snooze_reminder", {"reminder_id": rid, "until": "2025-01-10T08:00"}, now=NOW)

    done = await call(db, family, "Anna", "complete_reminder", {"reminder_id": rid}, now=NOW)
    assert (done["status"], done.get("next_at")) == ("done", None)

    weekly = await schedule(
        db, family, "Anna", "Europe/Berlin", text="Bins", when="2025-01-13T07:30", rrule="FREQ=WEEKLY;BYDAY=MO"
    )
    cancelled = await call(db, family, "Anna", "cancel_reminder", {"reminder_id": weekly["reminder_id"]}, now=NOW)
    assert cancelled["status"] == "cancelled"
    with pytest.raises(ToolRetry, match="was cancelled"):
        await call(db, family, "Anna", "snooze_reminder", {"reminder_id": weekly["reminder_id"], "minutes": 5})
    listed = await call(db, family, "Anna", "list_reminders", {"include_finished": True}, now=NOW)
    assert {r["status"] for r in listed["reminders"]} == {"done", "cancelled"}
    assert (await call(db, family, "Anna", "list_reminders", {}, now=NOW))["count"] == 0


async def test_complete_drops_a_pending_snooze_of_a_repeating_reminder(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Anna")
    daily = await schedule(
        db, family, "Anna", "Europe/Berlin", text="Pills", when="2025-01-11T08:00", rrule="FREQ=DAILY"
    )
    rid = daily["reminder_id"]
    await call(db, family, "Anna", "snooze_reminder", {"reminder_id": rid, "minutes": 30}, now=NOW)

    done = await call(db, family, "Anna", "complete_reminder", {"reminder_id": rid}, now=NOW)

    # The snooze stood for the 11th's occurrence; that one is done, and the schedule goes on with the 12th.
    assert (done["status"], done["next_at"]) == ("active", "2025-01-12T08:00+01:00")


async def test_move_changes_the_same_reminder_and_a_repeating_one_keeps_its_rule_from_the_new_time(
    db: Database, admin_conn
) -> None:
    family = await make_family(admin_conn, "Anna")
    weekly = await schedule(
        db, family, "Anna", "Europe/Berlin", text="Football", when="2025-01-16T17:00", rrule="FREQ=WEEKLY;BYDAY=TH"
    )
    once = await schedule(db, family, "Anna", "Europe/Berlin", text="Dentist", when="2025-01-11T09:00")

    async def move(reminder: dict[str, Any], when: str) -> dict[str, Any]:
        return await call(
            db, family, "Anna", "move_reminder", {"reminder_id": reminder["reminder_id"], "when": when}, now=NOW
        )

    moved = await move(weekly, "2025-01-16T18:30")
    later = await move(once, "2025-01-11T10:15")

    assert (moved["status"], moved["next_at"]) == ("active", "2025-01-16T18:30+01:00")
    assert (later["status"], later["next_at"]) == ("active", "2025-01-11T10:15+01:00")
    assert moved["previous"]["dtstart_local"] == "2025-01-16T17:00:00"  # what undo puts back
    kept = await row(admin_conn, weekly["reminder_id"])
    assert (kept["rrule"], kept["dtstart_local"]) == ("FREQ=WEEKLY;BYDAY=TH", datetime(2025, 1, 16, 18, 30))
    assert await admin_conn.fetchval("SELECT count(*) FROM reminders WHERE household_id = $1", family.household_id) == 2
    with pytest.raises(ToolRetry, match="not in the future"):
        await move(once, "2025-01-10T08:00")
    await call(db, family, "Anna", "cancel_reminder", {"reminder_id": once["reminder_id"]}, now=NOW)
    with pytest.raises(ToolRetry, match="was cancelled"):
        await move(once, "2025-01-12T08:00")


async def test_quiet_hours_are_the_members_own(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Anna", "Ben")
    assert await call(db, family, "Anna", "set_quiet_hours", {"start": "22:00", "end": "07:00"}) == {
        "start": "22:00",
        "end": "07:00",
        "previous": {"start": None, "end": None},
    }
    rows = await admin_conn.fetch(
        "SELECT name, quiet_start, quiet_end FROM users WHERE household_id = $1 ORDER BY id", family.household_id
    )
    assert [(r["name"], r["quiet_start"], r["quiet_end"]) for r in rows] == [
        ("Anna", time(22), time(7)),
        ("Ben", None, None),
    ]
    with pytest.raises(ToolRetry, match="give both start and end"):
        await call(db, family, "Anna", "set_quiet_hours", {"start": "22:00"})
    await call(db, family, "Anna", "set_quiet_hours", {})
    assert await admin_conn.fetchval("SELECT quiet_start FROM users WHERE id = $1", family.id("Anna")) is None


async def test_the_lying_context_cannot_reach_another_household(db: Database, admin_conn) -> None:
    ours, theirs = await make_family(admin_conn, "Anna"), await make_family(admin_conn, "Sam")
    async with tool_context(db, ours, "Anna", now=NOW, household_id=theirs.household_id) as ctx:
        args = REGISTRY.validate("list_reminders", {})
        assert (await REGISTRY.run(ctx, "list_reminders", args))["count"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # Both pass as different times with their offsets, yet both are 22:00 on the member's clock.
        ({"start": "22:00+02:00", "end": "22:00+01:00"}, "without a UTC offset"),
        ({"start": "22:00:10", "end": "22:00:50"}, "start and end must differ"),
        ({"start": "25:00", "end": "07:00"}, "start"),
    ],
)
async def test_quiet_hours_the_database_would_refuse_go_back_to_the_model(
    db: Database, admin_conn, args: dict, message: str
) -> None:
    family = await make_family(admin_conn, "Anna")
    with pytest.raises(ToolRetry) as caught:
        await call(db, family, "Anna", "set_quiet_hours", args)
    assert message in caught.value.message
    assert await admin_conn.fetchval("SELECT quiet_start FROM users WHERE id = $1", family.id("Anna")) is None


@pytest.mark.parametrize("tool", ["cancel_reminder", "complete_reminder", "snooze_reminder"])
@pytest.mark.parametrize("reminder_id", [2**63, 10**20])
async def test_ids_past_bigint_never_reach_postgres(db: Database, admin_conn, tool: str, reminder_id: int) -> None:
    family = await make_family(admin_conn, "Anna")
    args: dict[str, Any] = {"reminder_id": reminder_id} | ({"minutes": 5} if tool == "snooze_reminder" else {})
    with pytest.raises(ToolRetry, match="no row has an id that large"):
        await call(db, family, "Anna", tool, args)
