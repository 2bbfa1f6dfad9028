"""Live notifications in Chromium: a reminder fired while pages are open arrives over the SSE stream `/app/events`
at once — as FAA's newest message in the chat, as a notice on other pages, and through the Notification API when
the member turned notifications on and the page is not in view; a page that reconnects gets what it missed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg
import pytest
from playwright.async_api import BrowserContext, expect

from engine.settings import Settings
from tests.bot.web.pages.conftest import base_url, signed_in
from tests.bot.web.pages.test_calendar import session
from tests.e2e.scripts import routed_model
from tests.fakes.clock import ManualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.system import Family, System, eventually, make_family, running_system
from tools.storage import reminders
from worker.jobs import sweep_reminders

# The page's Notification API, recording what it would show, and a page that is not in view (a tab behind others):
# headless Chromium has no notification centre to look into.
NOT_IN_VIEW = """
window.shownNotifications = [];
window.Notification = class {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) { window.shownNotifications.push([title, options.body]); }
  addEventListener() {}
};
Object.defineProperty(document, "visibilityState", { get: () => "hidden" });
"""

NONE = "No reminders. Create one below or ask in the chat."


@pytest.fixture
async def clock() -> ManualClock:
    # The start of the next minute: the reminder set a minute later is in the future of the real clock as well.
    return ManualClock((datetime.now(UTC) + timedelta(minutes=1)).replace(second=0, microsecond=0))


@pytest.fixture
async def clocked(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection, clock: ManualClock
) -> AsyncIterator[System]:
    async with running_system(settings, fake_llm, admin_conn, clock=clock) as system:
        yield system


async def remind(system: System, family: Family, clock: ManualClock, text: str) -> int:
    """A reminder for Anna a minute from now, then fired: the clock moves on and the sweeper runs."""
    anna, due = family.user_ids["Anna"], clock.now() + timedelta(minutes=1)
    async with system.deps.db.household(family.household_id, anna) as conn:
        row = await reminders.insert(
            conn, household_id=family.household_id, created_by=anna, recipient_ids=[anna], text=text,
            timezone="Europe/Berlin", rrule=None, first_fire_at=due, dtstart_local=due.replace(tzinfo=None),
            for_household=False, source_inbox_id=None,
        )  # fmt: skip
    clock.set(due)
    worker = system.worker
    assert worker is not None
    await eventually(lambda: _started(worker.ctx))  # the worker's start-up built its dependencies
    await sweep_reminders(worker.ctx)
    return int(row["id"])


async def _started(ctx: dict[str, Any]) -> bool:
    return "deps" in ctx


async def test_a_reminder_reaches_the_open_pages_at_once_and_the_notification_api_when_out_of_view(
    clocked: System, clock: ManualClock, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(clocked.admin, "Live", {"Anna": "Europe/Berlin"})
    chat = await signed_in(clocked, new_context, family, "Anna")
    await chat.goto(base_url(clocked) + "/")
    behind = await signed_in(clocked, new_context, family, "Anna")
    await behind.add_init_script(NOT_IN_VIEW)
    await behind.goto(base_url(clocked) + "/reminders")
    await expect(behind.locator("#notify-state")).to_have_text(
        "This browser shows FAA's reminders as notifications while FAA is open in a tab."
    )
    for page in (chat, behind):  # both pages follow the stream before the reminder fires
        await expect(page.locator("html")).to_have_attribute("data-live", "open")

    await remind(clocked, family, clock, "Take the cake out of the oven")

    note = chat.locator(".msg.faa.note")
    await expect(note.locator(".text")).to_have_text("⏰ Reminder: Take the cake out of the oven")  # FAA's message
    await expect(chat.locator(".live-notice")).to_have_count(0)
    notice = behind.locator(".live-notice")
    await expect(notice).to_contain_text("Take the cake out of the oven")
    await expect(notice.get_by_role("link", name="Reminders")).to_have_attribute("href", "/reminders")
    shown = await behind.evaluate("window.shownNotifications")
    assert shown == [["FAA", "⏰ Reminder: Take the cake out of the oven"]]
    await notice.get_by_role("button", name="Close").click()
    await expect(notice).to_have_count(0)


async def test_a_page_that_reconnects_gets_the_notifications_it_missed(clocked: System, clock: ManualClock) -> None:
    family = await make_family(clocked.admin, "Missed", {"Anna": "Europe/Berlin"})
    anna = await session(clocked, family, "Anna")
    before = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()  # what the page saw last: before this reminder
    reminder_id = await remind(clocked, family, clock, "Water the plants")
    for _ in range(400):  # delivered by the worker (no page was open)
        sent = await clocked.admin.fetchval(
            "SELECT count(*) FROM outbox WHERE (payload->>'reminder_id')::bigint = $1 AND status = 'sent' "
            "AND household_id = $2",
            reminder_id,
            family.household_id,
        )
        if sent:
            break
        await asyncio.sleep(0.05)
    headers = {"Cookie": anna["Cookie"], "Last-Event-ID": before}
    async with clocked.client.get("/app/events", headers=headers) as response:
        assert response.status == 200 and response.content_type == "text/event-stream"
        received = b""
        async with asyncio.timeout(20):
            while b"Water the plants" not in received:
                received += await response.content.readany()
    assert b"event: notification\n" in received
    stranger = await clocked.client.get("/app/events", headers={"Accept": "text/event-stream"})
    assert stranger.status == 401  # only for a signed-in member


async def test_the_reminders_page_shows_a_reminder_set_in_a_chat_and_its_firing_without_a_reload(
    clocked: System, clock: ManualClock, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(clocked.admin, "Live list", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    pages = {}
    for member, size in (("Anna", (390, 844)), ("Tom", (1280, 800))):  # a phone and a desktop
        page = await signed_in(clocked, new_context, family, member)
        await page.set_viewport_size({"width": size[0], "height": size[1]})
        await page.goto(base_url(clocked) + "/reminders")
        await expect(page.locator("html")).to_have_attribute("data-live", "open")
        await expect(page.locator("#reminders li")).to_have_text([NONE])
        await page.evaluate("window.openedOnce = true")  # gone if the page were loaded again
        pages[member] = page
    due = clock.now() + timedelta(minutes=1)
    when = due.astimezone(ZoneInfo("Europe/Berlin")).strftime("%Y-%m-%dT%H:%M")
    clocked.llm.script(routed_model(reminder={"text": "take the cake out"}))

    said = await clocked.client.post(
        "/v1/messages", json={"text": "remind us all in a minute to take the cake out"}, headers=family.auth("Anna")
    )
    assert said.status == 200 and (await said.json())["outcome"] == "answered"

    for page in pages.values():  # set in Anna's chat: both open lists show it
        row = page.locator("#reminders li[data-reminder]")
        await expect(row.locator(".text")).to_have_text("take the cake out")
        await expect(row.locator(".next")).to_have_text(when.replace("T", " "))
    tom = pages["Tom"]
    await tom.locator("#reminders select[name=minutes]").focus()  # Tom is choosing how long to snooze it
    clock.set(due)
    worker = clocked.worker
    assert worker is not None
    await sweep_reminders(worker.ctx)  # it fires: done, and in each member's feed
    await expect(pages["Anna"].locator("#reminders li")).to_have_text([NONE])
    await expect(tom.locator(".live-notice")).to_contain_text("take the cake out")  # the firing reached Tom
    await asyncio.sleep(1)
    await expect(tom.locator("#reminders li[data-reminder]")).to_have_count(1)  # not pulled from under him
    await tom.locator("h1").click()  # done there: the list catches up
    for page in pages.values():
        await expect(page.locator("#reminders li")).to_have_text([NONE])
        await expect(page.locator("#feed li").first).to_contain_text("take the cake out")
    anna = pages["Anna"]  # set on Anna's page: Tom's open list shows it too
    csrf = {"X-CSRF-Token": await anna.locator("meta[name=csrf-token]").get_attribute("content") or ""}
    later = {"text": "Bake another cake", "when": "2030-01-05T09:00", "recipient": "household"}
    assert (await anna.request.post(base_url(clocked) + "/app/reminders", data=later, headers=csrf)).ok
    await expect(pages["Tom"].locator("#reminders li[data-reminder] .text")).to_have_text("Bake another cake")
    for page in pages.values():  # never reloaded: the page the test opened is still the one shown
        assert await page.evaluate("window.openedOnce === true")
    assert int(await pages["Tom"].locator("#reminders").get_attribute("data-updated") or 0) >= 3
