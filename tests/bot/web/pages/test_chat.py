"""The chat page in Chromium: a message streamed over SSE, tool steps shown as they happen, charts inline,
options as buttons."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from playwright.async_api import BrowserContext, expect

from tests.bot.web.pages.conftest import base_url, signed_in
from tests.bot.web.pages.test_calendar import session
from tests.e2e.scripts import routed_model
from tests.system import System, accept_unqueued, make_family
from tools.storage import outbox

CLOCK = ZoneInfo("Etc/GMT-1")  # a zone of no country: where the member lives says no currency


async def test_a_clarifying_question_offers_its_options_as_buttons(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Unsure", {"Anna": "Etc/GMT-1"})
    system.llm.script(routed_model())
    page = await signed_in(system, new_context, family, "Anna")
    await page.goto(base_url(system) + "/")

    await page.fill("#message", "I paid 20 for bread")
    await page.keyboard.press("Enter")
    option = page.locator("button.option", has_text="USD")
    await option.wait_for()
    before = datetime.now(CLOCK).strftime("%H:%M")
    await option.click()

    await expect(page.locator(".msg.me .text").last).to_have_text("USD")
    await expect(page.locator(".msg.faa")).to_have_count(3)  # the greeting, the question and the answer to "USD"
    # Times are on the member's clock (UTC+1), whatever zone the browser is in (UTC here).
    shown = await page.locator(".msg.me .when").last.text_content()
    after = datetime.now(CLOCK).strftime("%H:%M")
    assert shown in (before, after)  # the minute may have turned meanwhile
    # The newest answer is in view, above the sticky message box, not under it.
    answer = await page.locator(".msg.faa").last.bounding_box()
    composer = await page.locator("#chat-form").bounding_box()
    assert answer is not None and composer is not None
    assert answer["y"] + answer["height"] <= composer["y"] + 1


async def test_an_answer_still_being_written_when_the_chat_opens_arrives_in_it(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Patient", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    row = await accept_unqueued(system.deps, family, "Anna", "later-1", "what is on this week?")
    page = await signed_in(system, new_context, family, "Anna")
    await page.goto(base_url(system) + "/")  # the member reloaded while FAA was still writing the answer
    pending = page.locator(".msg.faa").last
    await expect(pending.locator(".text")).to_have_text("Working on it…")

    async with system.deps.db.household(family.household_id) as conn:
        await outbox.add(
            conn, household_id=family.household_id, user_id=family.user_ids["Anna"], channel="web", recipient="web",
            text="Nothing is planned this week.", inbox_id=row.id, payload={"outcome": "answered"},
        )  # fmt: skip
    await expect(pending.locator(".text")).to_have_text("Nothing is planned this week.")
    await expect(page.locator("[data-pending]")).to_have_count(0)
    await expect(pending.locator(".when")).to_have_count(1)
    tom = await session(system, family, "Tom")
    assert (await system.client.get(f"/app/chat/replies/{row.id}", headers=tom)).status == 404  # Anna's alone
