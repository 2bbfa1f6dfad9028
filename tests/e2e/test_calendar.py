"""The calendar and "forget everything about me" end to end on the routed engine, through the web API, the queue and
a scripted model: a plan with a time becomes an event, "what's on" lists it, a reminder hangs off it, and a member
is forgotten only after their yes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg
import pytest

from tests.e2e.test_routed import answers, send
from tests.fakes.clock import ManualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.system import System, make_family, routed_system
from tools.storage import households, memories

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = datetime(2031, 3, 10, 10, 0, tzinfo=BERLIN)  # far ahead of the real clock: no reminder fires


@pytest.fixture
async def routed(
    migrated: Any, fake_llm: FakeOpenAI, redis_url: str, redis: object, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    async with routed_system(migrated, fake_llm, redis_url, admin_conn, clock=ManualClock(MONDAY)) as system:
        yield system


async def test_a_plan_becomes_an_event_is_listed_and_gets_a_reminder_before_it(routed: System) -> None:
    family = await make_family(routed.admin, "Calendar e2e", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    routed.llm.script(answers(fact={"kind": "plan", "person": None, "category": "dentist"}))

    told = await send(routed, family, "Dentist on Friday at 3pm")
    assert told["outcome"] == "answered"
    assert told["reply"] == "Saved: Dentist on Friday at 3pm. In the calendar on Fri 2031-03-14 at 15:00."
    event = await routed.admin.fetchrow("SELECT * FROM events WHERE household_id = $1", family.household_id)
    assert (event["title"], event["member_id"], event["source"]) == (
        "Dentist on Friday at 3pm",
        family.user_ids["Anna"],
        "chat",
    )
    assert event["starts_at"] == datetime(2031, 3, 14, 15, 0, tzinfo=BERLIN)
    [memory] = await routed.admin.fetch("SELECT kind FROM memories WHERE household_id = $1", family.household_id)
    assert memory["kind"] == "plan"

    calls = len(routed.llm.requests)
    week = await send(routed, family, "What's on this week?", member="Tom")
    assert week["reply"] == "In the calendar:\n- on Fri 2031-03-14 at 15:00: Dentist on Friday at 3pm (Anna)"
    assert len(routed.llm.requests) == calls  # listing needs no model call

    reminded = await send(routed, family, "remind me an hour before the dentist")
    assert reminded["reply"] == (
        "OK, I'll remind you on Fri 2031-03-14 at 14:00, 60 minutes before: Dentist on Friday at 3pm"
    )
    reminder = await routed.admin.fetchrow("SELECT * FROM reminders WHERE household_id = $1", family.household_id)
    assert (reminder["event_id"], reminder["minutes_before"]) == (event["id"], 60)
    assert reminder["next_fire_at"] == datetime(2031, 3, 14, 14, 0, tzinfo=BERLIN)
    assert len(routed.llm.requests) == calls  # one event named: no model call to pick it


@pytest.mark.parametrize(
    ("told", "asked"),
    [
        ("周四下午三点带妈妈去医院复查", "到时候提前一小时提醒我一下"),  # "then", how long before: the event told
        ("ben's got the orthodontist thursday at 3pm", "ping me an hour before then"),
    ],
)
async def test_a_reminder_before_the_event_just_told_hangs_off_it(routed: System, told: str, asked: str) -> None:
    family = await make_family(routed.admin, f"Calendar then {asked}", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(fact={"kind": "plan", "person": None, "category": "health"}))
    await send(routed, family, told)

    body = await send(routed, family, asked)

    assert body["outcome"] == "answered", body
    event = await routed.admin.fetchrow("SELECT id FROM events WHERE household_id = $1", family.household_id)
    [reminder] = await routed.admin.fetch(
        "SELECT event_id, minutes_before, next_fire_at FROM reminders WHERE household_id = $1", family.household_id
    )
    assert (reminder["event_id"], reminder["minutes_before"]) == (event["id"], 60)
    assert reminder["next_fire_at"] == datetime(2031, 3, 13, 14, 0, tzinfo=BERLIN)


async def test_a_long_message_names_its_event_by_the_sentence_that_says_when(routed: System) -> None:
    family = await make_family(routed.admin, "Long title e2e", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(fact={"kind": "plan", "person": None, "category": "school"}))
    told = await send(
        routed,
        family,
        "Fwd from the school office: Dear parents, thank you for all your help with the autumn fair this year. "
        "The swimming gala is on Thursday at 3pm.",
    )
    assert told["outcome"] == "answered"
    event = await routed.admin.fetchrow("SELECT * FROM events WHERE household_id = $1", family.household_id)
    assert event["title"] == "The swimming gala is on Thursday at 3pm."
    assert event["starts_at"] == datetime(2031, 3, 13, 15, 0, tzinfo=BERLIN)


@pytest.mark.parametrize(
    ("plan", "text", "fires"),
    [
        ("Dentist on Friday at 3pm", "give me a heads up the day before the dentist", datetime(2031, 3, 13, 15, 0)),
        (
            "Dentist on Friday at 3pm",
            "give me a shout the night before the dentist, say 8pm",
            datetime(2031, 3, 13, 20, 0),
        ),
        ("Zahnarzt am Freitag um 15 Uhr", "am vortag um 18 uhr an den zahnarzt erinnern", datetime(2031, 3, 13, 18, 0)),
        ("Dentist on Friday at 3pm", "remind me the evening before the dentist at 7", datetime(2031, 3, 13, 19, 0)),
    ],
)
async def test_a_reminder_the_day_before_an_event_is_at_the_time_named_or_the_events(
    routed: System, plan: str, text: str, fires: datetime
) -> None:
    family = await make_family(routed.admin, "Day before e2e", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(fact={"kind": "plan", "person": None, "category": "dentist"}))
    await send(routed, family, plan)

    reminded = await send(routed, family, text)
    assert reminded["outcome"] == "answered"
    reminder = await routed.admin.fetchrow("SELECT * FROM reminders WHERE household_id = $1", family.household_id)
    assert reminder["next_fire_at"] == fires.replace(tzinfo=BERLIN)
    assert reminder["event_id"] is not None


@pytest.mark.parametrize(
    "text",
    [
        "the school bus comes at 7:42 now not 7:35, they changed the timetable",
        "der hort macht ab dezember schon um 16:30 zu statt 17 uhr",
        "校车现在早上7点40到，不是7点半了",
    ],
)
async def test_a_time_told_as_how_things_now_stand_is_a_note_and_no_event(routed: System, text: str) -> None:
    family = await make_family(routed.admin, f"Timetable {text[:12]}", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(fact={"kind": "plan", "person": None, "category": "school"}))  # the model says plan

    told = await send(routed, family, text)

    assert told["outcome"] == "answered" and "2031" not in told["reply"]  # no calendar date in the reply
    [memory] = await routed.admin.fetch("SELECT kind FROM memories WHERE household_id = $1", family.household_id)
    assert memory["kind"] == "fact"
    assert await routed.admin.fetchval("SELECT count(*) FROM events WHERE household_id = $1", family.household_id) == 0


async def test_events_the_message_names_alike_leave_the_pick_to_the_model(routed: System) -> None:
    family = await make_family(routed.admin, "Calendar pick", {"Li": "Asia/Shanghai"})
    routed.llm.script(answers(fact={"kind": "plan", "person": None, "category": "school"}))
    await send(routed, family, "周三下午4点带小明体检", member="Li")
    await send(routed, family, "周四上午9点体检", member="Li")
    await send(routed, family, "周五晚上7点家长会", member="Li")
    ids = [
        r["id"]
        for r in await routed.admin.fetch(
            "SELECT id FROM events WHERE household_id = $1 ORDER BY id", family.household_id
        )
    ]
    assert len(ids) == 3

    routed.llm.script(answers(event_reminder={"event_id": ids[1]}))
    reply = await send(routed, family, "体检前半小时提醒我", member="Li")
    assert "提前30分钟" in reply["reply"]
    request = routed.llm.requests[-1]
    assert request.schema_name == "route_event_reminder"
    assert request.schema is not None and request.schema["properties"]["event_id"]["enum"] == ids[:2]  # the 体检s
    linked = await routed.admin.fetchval("SELECT event_id FROM reminders WHERE household_id = $1", family.household_id)
    assert linked == ids[1]


async def test_forgetting_a_member_waits_for_their_yes(routed: System) -> None:
    family = await make_family(routed.admin, "Forget me", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    async with routed.deps.db.household(family.household_id, family.user_ids["Anna"]) as conn:
        for text, visibility in (("my diary note", "private"), ("Paid 12 EUR for bread", "household")):
            await memories.insert(
                conn,
                household_id=family.household_id,
                author_id=family.user_ids["Anna"],
                content=text,
                understanding={"kind": "note"},
                embedding=[0.1] * 64,
                amount=Decimal("12") if "EUR" in text else None,
                currency="EUR" if "EUR" in text else None,
                occurred_at=MONDAY,
                visibility=visibility,
                source_inbox_id=None,
            )

    asked = await send(routed, family, "Forget everything about me")
    assert asked["outcome"] == "clarifying" and asked["options"] == ["Yes", "No"]
    assert "cannot be undone" in asked["reply"]
    kept = await send(routed, family, "no")
    assert kept["reply"] == "OK, I left everything as it was."
    assert await routed.admin.fetchval("SELECT name FROM users WHERE id = $1", family.user_ids["Anna"]) == "Anna"

    await send(routed, family, "Forget everything about me")
    done = await send(routed, family, "yes")
    assert done["reply"] == "Done: I forgot everything about you. Goodbye!"
    rows = await routed.admin.fetch(
        "SELECT content, author_id FROM memories WHERE household_id = $1 ORDER BY id", family.household_id
    )
    assert [(r["content"], r["author_id"]) for r in rows] == [("Paid 12 EUR for bread", None)]
    anna = await routed.admin.fetchrow("SELECT * FROM users WHERE id = $1", family.user_ids["Anna"])
    assert anna["name"] == "former member" and anna["api_token_hash"] is None and anna["forgotten_at"] is not None
    texts = await routed.admin.fetch("SELECT text FROM inbox WHERE user_id = $1 ORDER BY id", family.user_ids["Anna"])
    assert [r["text"] for r in texts][:-1] == [""] * (len(texts) - 1)  # all but the "yes" being answered
    async with routed.deps.db.unscoped() as conn:  # the API's token cache forgets it within a minute
        assert await households.resolve_token(conn, family.tokens["Anna"]) is None
    tom = await send(routed, family, "What's on this week?", member="Tom")
    assert tom["outcome"] == "answered"


async def test_a_reminder_before_something_not_in_the_calendar_asks_when(routed: System) -> None:
    family = await make_family(routed.admin, "Calendar guests", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(fact={"kind": "plan", "person": None, "category": "dentist"}))
    await send(routed, family, "Dentist on Friday at 3pm")

    asked = await send(routed, family, "remind me 10 minutes before the guests arrive")
    assert asked["outcome"] == "clarifying" and asked["reply"] == "When should I remind you?"
    assert (
        await routed.admin.fetchval("SELECT count(*) FROM reminders WHERE household_id = $1", family.household_id) == 0
    )


async def test_a_moved_event_takes_its_reminder_along(routed: System) -> None:
    family = await make_family(routed.admin, "Calendar move", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(fact={"kind": "plan", "person": None, "category": "dentist"}))
    await send(routed, family, "Dentist on Friday at 3pm")
    await send(routed, family, "remind me an hour before the dentist")

    moved = await send(routed, family, "The dentist moved to 16:30")
    assert moved["reply"] == "Moved: Dentist on Friday at 3pm, now on Fri 2031-03-14 at 16:30."
    event = await routed.admin.fetchrow("SELECT starts_at FROM events WHERE household_id = $1", family.household_id)
    assert event["starts_at"] == datetime(2031, 3, 14, 16, 30, tzinfo=BERLIN)
    fire_at = await routed.admin.fetchval(
        "SELECT next_fire_at FROM reminders WHERE household_id = $1", family.household_id
    )
    assert fire_at == datetime(2031, 3, 14, 15, 30, tzinfo=BERLIN)

    await send(routed, family, "den Dentist auf Samstag verschoben")
    event = await routed.admin.fetchrow("SELECT starts_at FROM events WHERE household_id = $1", family.household_id)
    assert event["starts_at"] == datetime(2031, 3, 15, 16, 30, tzinfo=BERLIN)  # the same time on the new day


async def test_an_event_pushed_back_by_a_span_moves_by_it_and_one_called_off_in_passing_goes(routed: System) -> None:
    """ "parents evening pushed back an hour" moves the event by the span from its own start (no second event);
    "swimming is off this week" calls the other one off."""
    family = await make_family(routed.admin, "Calendar span", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(fact={"kind": "plan", "person": None, "category": "school"}))
    await send(routed, family, "Parents evening on Friday at 6pm")
    await send(routed, family, "Swimming on Thursday at 5pm")

    pushed = await send(routed, family, "parents evening pushed back an hour")
    off = await send(routed, family, "swimming is off this week")

    assert pushed["outcome"] == "answered" and off["outcome"] == "answered", (pushed, off)
    rows = await routed.admin.fetch(
        "SELECT title, starts_at, status FROM events WHERE household_id = $1 ORDER BY id", family.household_id
    )
    assert [(row["starts_at"], row["status"]) for row in rows] == [
        (datetime(2031, 3, 14, 19, 0, tzinfo=BERLIN), "confirmed"),
        (datetime(2031, 3, 13, 17, 0, tzinfo=BERLIN), "cancelled"),
    ]


async def test_cancelling_an_event_takes_its_reminder_along_and_a_reminder_is_still_cancelled_by_name(
    routed: System,
) -> None:
    family = await make_family(routed.admin, "Calendar cancel", {"Anna": "Europe/Berlin"})
    routed.llm.script(
        answers(
            fact={"kind": "plan", "person": None, "category": "dentist"},
            reminder={"text": "put the bins out", "time": "t1"},
        )
    )
    await send(routed, family, "Dentist on Friday at 3pm")
    await send(routed, family, "remind me an hour before the dentist")
    await send(routed, family, "remind me to put the bins out on Thursday at 7pm")

    cancelled = await send(routed, family, "cancel the dentist")

    assert cancelled["reply"] == "Cancelled: Dentist on Friday at 3pm (and the reminders set for it)."
    statuses = await routed.admin.fetch(
        "SELECT r.text, r.status FROM reminders r WHERE r.household_id = $1 ORDER BY r.id", family.household_id
    )
    assert [(r["text"], r["status"]) for r in statuses] == [
        ("Dentist on Friday at 3pm", "cancelled"),
        ("put the bins out", "active"),
    ]
    assert (
        await routed.admin.fetchval("SELECT status FROM events WHERE household_id = $1", family.household_id)
        == "cancelled"
    )

    bins = await send(routed, family, "cancel the bins")  # names no event: a reminder
    assert "put the bins out" in bins["reply"]
    assert (
        await routed.admin.fetchval(
            "SELECT status FROM reminders WHERE household_id = $1 AND text = 'put the bins out'", family.household_id
        )
        == "cancelled"
    )
