"""The calendar tools through the registry, and .ics files: written, read by the `icalendar` package, imported by
UID (twice changes nothing), with reminders that follow their event."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import icalendar
import pytest

from engine.digests import gather_facts, template
from tools.errors import ToolRetry
from tools.events import import_events
from tools.infra import ics
from tools.storage import events as stored
from tools.storage.database import Database
from tools.storage.digests import Occurrence

from . import call, make_family, tool_context

NOW = datetime(2026, 3, 9, 8, 0, tzinfo=UTC)  # a Monday


async def add(db: Database, family: Any, member: str = "Anna", **args: Any) -> dict[str, Any]:
    return await call(db, family, member, "add_event", args, now=NOW)


async def test_an_event_keeps_the_members_clock_and_lists_in_its_week(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Anna", "Tom")
    dentist = await add(db, family, title="Dentist", start="2026-03-13T15:00")
    football = await add(
        db, family, title="Football", start="2026-03-10T17:00", end="2026-03-10T18:30", rrule="FREQ=WEEKLY", whose="Tom"
    )
    trip = await add(db, family, title="Ski trip", start="2026-03-20", end="2026-03-22", whose="household")

    assert dentist["start"] == "2026-03-13T15:00+01:00" and dentist["whose"] == "Anna"
    assert trip["all_day"] and trip["start"] == "2026-03-20" and trip["end"] == "2026-03-23"
    week = await call(db, family, "Tom", "list_events", {}, now=NOW)
    assert [(e["title"], e["start"]) for e in week["events"]] == [
        ("Football", "2026-03-10T17:00+01:00"),
        ("Dentist", "2026-03-13T15:00+01:00"),
    ]
    month = await call(db, family, "Tom", "list_events", {"start": "2026-03-09", "days": 21}, now=NOW)
    assert [e["title"] for e in month["events"]].count("Football") == 3
    assert month["events"][2]["title"] == "Football" and month["events"][2]["end"] == "2026-03-17T18:30+01:00"
    assert football["event_id"] != dentist["event_id"]


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        ({"title": "Dentist", "start": "next friday"}, "ISO 8601"),
        ({"title": "", "start": "2026-03-13T15:00"}, "title"),
        ({"title": "Dentist", "start": "2026-03-13T15:00", "end": "2026-03-13T14:00"}, "end must come after"),
        ({"title": "Dentist", "start": "2026-03-13T15:00", "whose": "Zed"}, "no member named 'Zed'"),
        ({"title": "Dentist", "start": "2026-03-13T15:00", "rrule": "FREQ=SOMETIMES"}, "FREQ=SOMETIMES is not one of"),
        ({"title": "Dentist", "start": "2026-03-13T15:00", "household_id": 2}, "household_id"),
    ],
)
async def test_bad_arguments_go_back_to_the_model(
    db: Database, admin_conn, args: dict[str, Any], complaint: str
) -> None:
    family = await make_family(admin_conn, "Anna")
    with pytest.raises(ToolRetry) as caught:
        await add(db, family, **args)
    assert complaint.lower() in caught.value.message.lower()


async def test_a_reminder_before_an_event_moves_and_is_cancelled_with_it(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Anna")
    dentist = await add(db, family, title="Dentist", start="2026-03-13T15:00")
    reminder = await call(
        db, family, "Anna", "remind_before_event", {"event_id": dentist["event_id"], "minutes_before": 60}, now=NOW
    )
    assert reminder["next_at"] == "2026-03-13T14:00+01:00"

    moved = await call(
        db, family, "Anna", "move_event", {"event_id": dentist["event_id"], "start": "2026-03-13T16:30"}, now=NOW
    )
    assert moved["start"] == "2026-03-13T16:30+01:00" and moved["previous"]["start"] == "2026-03-13T15:00+01:00"
    row = await admin_conn.fetchrow("SELECT * FROM reminders WHERE id = $1", reminder["reminder_id"])
    assert row["next_fire_at"] == datetime(2026, 3, 13, 14, 30, tzinfo=UTC) and row["status"] == "active"

    await call(db, family, "Anna", "cancel_event", {"event_id": dentist["event_id"]}, now=NOW)
    row = await admin_conn.fetchrow("SELECT * FROM reminders WHERE id = $1", reminder["reminder_id"])
    assert row["status"] == "cancelled"
    with pytest.raises(ToolRetry, match="cancelled"):
        await call(db, family, "Anna", "move_event", {"event_id": dentist["event_id"], "start": "2026-03-14"}, now=NOW)
    with pytest.raises(ToolRetry, match="no event"):
        await call(db, family, "Anna", "cancel_event", {"event_id": 10**12}, now=NOW)


async def test_a_reminder_that_would_fire_in_the_past_is_refused(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Anna")
    soon = await add(db, family, title="Call", start="2026-03-09T09:30")  # half an hour from now
    with pytest.raises(ToolRetry, match="in the past"):
        await call(
            db, family, "Anna", "remind_before_event", {"event_id": soon["event_id"], "minutes_before": 120}, now=NOW
        )


def _ics(*events: icalendar.Event) -> bytes:
    cal = icalendar.Calendar()
    cal.add("prodid", "-//test//EN")
    cal.add("version", "2.0")
    for event in events:
        cal.add_component(event)
    data: bytes = cal.to_ical()
    return data


def _vevent(uid: str, summary: str, start: Any, **extra: Any) -> icalendar.Event:
    event = icalendar.Event()
    event.add("uid", uid)
    event.add("summary", summary)
    event.add("dtstart", start)
    event.add("dtstamp", NOW)
    for key, value in extra.items():
        event.add(key, value)
    return event


async def test_an_import_is_idempotent_by_uid_and_an_update_moves_the_linked_reminder(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Anna")
    school = _ics(
        _vevent("parents-evening@school", "Parents' evening", datetime(2026, 3, 12, 18, 0, tzinfo=UTC)),
        _vevent("holiday@school", "School holiday", datetime(2026, 3, 30).date(), dtend=datetime(2026, 4, 3).date()),
    )
    async with tool_context(db, family, "Anna", now=NOW) as ctx:
        first = await import_events(ctx, ics.read(school, ctx.timezone), "household")
    async with tool_context(db, family, "Anna", now=NOW) as ctx:
        again = await import_events(ctx, ics.read(school, ctx.timezone), "household")
    assert (first.created, first.updated, first.unchanged) == (2, 0, 0)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 2)

    event_id = await admin_conn.fetchval(
        "SELECT id FROM events WHERE household_id = $1 AND uid = 'parents-evening@school'", family.household_id
    )
    reminder = await call(
        db, family, "Anna", "remind_before_event", {"event_id": event_id, "minutes_before": 30}, now=NOW
    )
    moved = _ics(_vevent("parents-evening@school", "Parents' evening", datetime(2026, 3, 12, 19, 0, tzinfo=UTC)))
    async with tool_context(db, family, "Anna", now=NOW) as ctx:
        update = await import_events(ctx, ics.read(moved, ctx.timezone), "household")
    assert update.updated == 1
    fire_at = await admin_conn.fetchval("SELECT next_fire_at FROM reminders WHERE id = $1", reminder["reminder_id"])
    assert fire_at == datetime(2026, 3, 12, 18, 30, tzinfo=UTC)


async def test_a_written_calendar_parses_and_round_trips_through_import(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Anna", "Tom")
    await add(db, family, title="Dentist", start="2026-03-13T15:00", end="2026-03-13T16:00")
    await add(db, family, title="Football", start="2026-03-10T17:00", rrule="FREQ=WEEKLY;BYDAY=TU", whose="Tom")
    await add(db, family, title="Ski trip", start="2026-03-20", end="2026-03-22", whose="household")
    async with db.household(family.household_id) as conn:
        rows = await stored.feed(conn, family.household_id, None)
    data = ics.calendar("Family", [stored.as_ics(row) for row in rows], stamp=NOW)

    parsed = icalendar.Calendar.from_ical(data)
    assert parsed.get("version") == "2.0"
    assert {str(c.get("tzid")) for c in parsed.walk("VTIMEZONE")} == {"Europe/Berlin"}
    by_title = {str(e.get("summary")): e for e in parsed.walk("VEVENT")}
    assert by_title["Dentist"].get("dtstart").dt == datetime(2026, 3, 13, 14, 0, tzinfo=UTC)
    assert by_title["Football"].get("rrule").to_ical() == b"FREQ=WEEKLY;BYDAY=TU"
    assert by_title["Ski trip"].get("dtstart").dt == datetime(2026, 3, 20).date()

    other = await make_family(admin_conn, "Li", timezone="Asia/Shanghai")
    async with tool_context(db, other, "Li", now=NOW) as ctx:
        imported = await import_events(ctx, ics.read(data, ctx.timezone), "self")
    assert imported.created == 3
    async with db.household(other.household_id) as conn:
        copied = await stored.feed(conn, other.household_id, None)
    assert {_kept(r) for r in copied} == {_kept(r) for r in rows}
    assert {r["timezone"] for r in copied if not r["all_day"]} == {"Europe/Berlin"}


def _kept(row: Any) -> tuple[Any, ...]:
    """What an import must keep of an event: an all-day one's days are dates, read on the importer's clock."""
    tz = ZoneInfo(row["timezone"])
    span = tuple(None if at is None else at.astimezone(tz).date() for at in (row["starts_at"], row["ends_at"]))
    times = span if row["all_day"] else (row["starts_at"], row["ends_at"])
    return (row["uid"], row["title"], *times, row["all_day"], row["rrule"])


GARBAGE_START = (
    b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:a@b\r\nDTSTART:garbage\r\nSUMMARY:Sports day\r\n"
    b"END:VEVENT\r\nEND:VCALENDAR\r\n"
)


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        (b"hello", "not an iCalendar"),
        (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n", "no event"),
        (b"X" * (ics.MAX_BYTES + 1), "larger than"),
        (GARBAGE_START, "cannot be read"),
        (b"BEGIN:VCALENDAR\r\n" * 5_000 + b"END:VCALENDAR\r\n" * 5_000, "nests components"),
        (
            b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:a@b\r\nDTSTART:20260101T100000Z\r\n"
            b"RRULE:FREQ=MINUTELY\r\n"
            + b"".join(b"EXDATE:20260101T%02d%02d00Z\r\n" % (n // 60 % 24, n % 60) for n in range(10_000))
            + b"END:VEVENT\r\nEND:VCALENDAR\r\n",
            "more than",
        ),
        (
            b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:a@b\r\nDTSTART:20260101T100000Z\r\nRDATE:"
            + b",".join(b"20260102T%02d%02d00Z" % (n // 60 % 24, n % 60) for n in range(ics.MAX_DATES + 1))
            + b"\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
            "extra dates",
        ),
    ],
)
def test_an_unusable_file_says_why(data: bytes, complaint: str) -> None:
    with pytest.raises(ics.IcsError, match=complaint):
        ics.read(data, "UTC")


def test_a_floating_time_is_read_on_the_members_clock() -> None:
    data = _ics(_vevent("a@b", "Lunch", datetime(2026, 3, 12, 12, 0), duration=timedelta(hours=1)))
    [event] = ics.read(data, "Asia/Shanghai")
    assert event.starts_at == datetime(2026, 3, 12, 4, 0, tzinfo=UTC) and event.timezone == "Asia/Shanghai"
    assert event.ends_at == datetime(2026, 3, 12, 5, 0, tzinfo=UTC)


async def test_undo_takes_back_an_added_moved_or_cancelled_event(db: Database, admin_conn) -> None:
    family = await make_family(admin_conn, "Anna")
    inbox = iter(range(1, 100))

    async def message(name: str, args: dict[str, Any]) -> dict[str, Any]:
        """A tool call as one message makes it: journaled under a new inbox row, so undo can find it."""
        inbox_id = await admin_conn.fetchval(
            """INSERT INTO inbox (household_id, user_id, channel, external_id, trace_id)
               VALUES ($1, $2, 'web', $3, 't') RETURNING id""",
            family.household_id,
            family.id("Anna"),
            f"undo-events-{family.household_id}-{next(inbox)}",
        )
        result = await call(db, family, "Anna", name, args, now=NOW, inbox_id=inbox_id)
        await admin_conn.execute(
            "INSERT INTO journal (household_id, inbox_id, seq, kind, payload) VALUES ($1, $2, 1, 'tool', $3::jsonb)",
            family.household_id,
            inbox_id,
            json.dumps({"tool": name, "writes": name != "undo", "result": result}),
        )
        return result

    added = await message("add_event", {"title": "Dentist", "start": "2026-03-13T15:00"})
    await message("move_event", {"event_id": added["event_id"], "start": "2026-03-13T17:00"})
    undone = await message("undo", {})
    assert undone["undone"] == ["put the event 'Dentist' back as it was"]
    row = await admin_conn.fetchrow("SELECT starts_at, status FROM events WHERE id = $1", added["event_id"])
    assert row["starts_at"] == datetime(2026, 3, 13, 14, 0, tzinfo=UTC) and row["status"] == "confirmed"

    await message("cancel_event", {"event_id": added["event_id"]})
    await message("undo", {})
    assert await admin_conn.fetchval("SELECT status FROM events WHERE id = $1", added["event_id"]) == "confirmed"
    undone = await message("undo", {})  # the move was undone already: next comes the add
    assert undone["undone"] == ["took the new event 'Dentist' out of the calendar"]
    assert await admin_conn.fetchval("SELECT status FROM events WHERE id = $1", added["event_id"]) == "cancelled"


async def test_the_morning_agenda_lists_the_days_events_and_a_repeating_one_on_its_day(
    db: Database, admin_conn
) -> None:
    family = await make_family(admin_conn, "Anna", "Tom")
    await add(db, family, title="Dentist", start="2026-03-13T15:00")
    await add(db, family, title="Football", start="2026-03-06T17:00", rrule="FREQ=WEEKLY", whose="Tom")
    await add(db, family, title="Ski trip", start="2026-03-13", whose="household")
    await add(db, family, title="Tomorrow's thing", start="2026-03-14T09:00")
    friday = Occurrence("morning", date(2026, 3, 13), date(2026, 3, 14), NOW)
    async with tool_context(db, family, "Anna", now=NOW) as ctx:
        facts = await gather_facts(ctx, friday)
    assert facts["events"] == [
        {"time": "all day", "text": "Ski trip", "people": []},
        {"time": "15:00", "text": "Dentist", "people": ["Anna"]},
        {"time": "17:00", "text": "Football", "people": ["Tom"]},
    ]
    assert "Calendar:\n- all day Ski trip\n- 15:00 Dentist (Anna)\n- 17:00 Football (Tom)" in template(facts)
