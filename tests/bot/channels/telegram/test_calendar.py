"""The calendar and "forget everything about me" through Telegram on the routed engine: a plan told in German
becomes an event, an .ics document is imported once, and forgetting waits for a press of the Yes button."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg
import icalendar
import pytest

from tests.bot.channels.telegram import updates
from tests.bot.channels.telegram.conftest import link, post, telegram_settings
from tests.bot.channels.telegram.test_flow import delivered
from tests.e2e.test_routed import answers
from tests.fakes.clock import ManualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.system import System, eventually, make_family, routed_system

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = datetime(2031, 3, 10, 10, 0, tzinfo=BERLIN)


@pytest.fixture
async def tg_routed(
    migrated: Any,
    fake_llm: FakeOpenAI,
    redis_url: str,
    redis: object,
    admin_conn: asyncpg.Connection,
    fake_telegram: FakeTelegram,
) -> AsyncIterator[System]:
    telegram = telegram_settings(fake_telegram)
    clock = ManualClock(MONDAY)
    async with routed_system(migrated, fake_llm, redis_url, admin_conn, clock=clock, telegram=telegram) as system:
        yield system


def school_calendar() -> bytes:
    cal = icalendar.Calendar()
    cal.add("prodid", "-//school//EN")
    cal.add("version", "2.0")
    for uid, title, day in (("sports@school", "Sports day", 20), ("fair@school", "School fair", 27)):
        event = icalendar.Event()
        event.add("uid", uid)
        event.add("summary", title)
        event.add("dtstart", datetime(2031, 3, day).date())
        event.add("dtstamp", MONDAY)
        cal.add_component(event)
    data: bytes = cal.to_ical()
    return data


def document(user_id: int, file_id: str) -> dict[str, Any]:
    doc = {
        "file_id": file_id,
        "file_unique_id": f"u-{file_id}",
        "file_name": "school.ics",
        "mime_type": "text/calendar",
    }
    return updates.message(user_id, None, document=doc)


async def test_a_plan_and_a_calendar_file_reach_the_calendar(tg_routed: System, fake_telegram: FakeTelegram) -> None:
    family = await make_family(tg_routed.admin, "Telegram calendar", {"Anna": "Europe/Berlin"})
    anna = await link(tg_routed, family, "Anna")
    tg_routed.llm.script(answers(fact={"kind": "plan", "person": None, "category": "dentist"}))

    await post(tg_routed, updates.message(anna, "Zahnarzt am Freitag um 15 Uhr"))
    await delivered(tg_routed, anna)
    assert fake_telegram.sent("sendMessage")[-1].fields["text"] == (
        "Notiert: Zahnarzt am Freitag um 15 Uhr. Im Kalender am Fr 2031-03-14 um 15:00."
    )

    fake_telegram.files["BQACAgQ-school"] = school_calendar()
    for count in (2, 3):
        await post(tg_routed, document(anna, "BQACAgQ-school"))
        await delivered(tg_routed, anna, count=count)
    replies = [call.fields["text"] for call in fake_telegram.sent("sendMessage")[-2:]]
    assert replies == [
        "Calendar school.ics: 2 new, 0 updated, 0 unchanged. Sports day, School fair",
        "Calendar school.ics: 0 new, 0 updated, 2 unchanged.",
    ]
    titles = await tg_routed.admin.fetch(
        "SELECT title, member_id FROM events WHERE household_id = $1 ORDER BY starts_at", family.household_id
    )
    assert [(r["title"], r["member_id"]) for r in titles] == [
        ("Zahnarzt am Freitag um 15 Uhr", family.user_ids["Anna"]),
        ("Sports day", None),
        ("School fair", None),
    ]


async def test_forget_me_asks_with_buttons_and_yes_forgets(tg_routed: System, fake_telegram: FakeTelegram) -> None:
    family = await make_family(tg_routed.admin, "Telegram forget", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    anna = await link(tg_routed, family, "Anna")

    await post(tg_routed, updates.message(anna, "Vergiss alles über mich"))
    await delivered(tg_routed, anna)
    question = fake_telegram.sent("sendMessage")[-1]
    options = [(b["text"], b["callback_data"]) for row in question.json("reply_markup")["inline_keyboard"] for b in row]
    assert [label for label, _ in options] == ["Ja", "Nein"]
    assert (
        await tg_routed.admin.fetchval("SELECT forgotten_at FROM users WHERE id = $1", family.user_ids["Anna"]) is None
    )

    await post(tg_routed, updates.button_press(anna, options, options[0][1]))

    async def answered() -> bool:
        return len(fake_telegram.sent("sendMessage")) >= 2

    await eventually(answered)
    assert fake_telegram.sent("sendMessage")[-1].fields["text"] == (
        "Erledigt: Ich habe alles über dich vergessen. Auf Wiedersehen!"
    )
    user = await tg_routed.admin.fetchrow("SELECT name, forgotten_at FROM users WHERE id = $1", family.user_ids["Anna"])
    assert user["name"] == "former member" and user["forgotten_at"] is not None
    assert (
        await tg_routed.admin.fetchval(
            "SELECT count(*) FROM user_identities WHERE user_id = $1", family.user_ids["Anna"]
        )
        == 0
    )
