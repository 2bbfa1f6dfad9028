"""The chat page in Chromium: a message streamed over SSE, tool steps shown as they happen, charts inline,
options as buttons."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from playwright.async_api import BrowserContext, expect

from tests.bot.web.pages.conftest import base_url, signed_in
from tests.bot.web.pages.test_calendar import session
from tests.e2e.scripts import analysis, is_analysis
from tests.fakes.openai_server import ChatRequest, Scripted
from tests.system import System, accept_unqueued, make_family
from tools.storage import outbox

BERLIN = ZoneInfo("Europe/Berlin")


async def test_a_question_is_answered_as_a_stream_with_its_tool_steps_and_chart(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Chatty", {"Anna": "Europe/Berlin"})

    def model(request: ChatRequest) -> Scripted:
        if is_analysis(request):
            chart = {"kind": "bar", "title": "All", "labels": ["all"], "series": [{"name": "count", "values": [0]}]}
            plan = [{"tool": "aggregate", "args": {"op": "count"}}, {"tool": "render_chart", "args": chart}]
            return analysis("query", plan=plan, needs_results=True)
        return Scripted(content="You have stored nothing yet, so the count is 0.")

    system.llm.script(model)
    page = await signed_in(system, new_context, family, "Anna")
    await page.goto(base_url(system) + "/")
    await expect(page.locator(".msg.hello")).to_contain_text("Hello Anna")

    await page.fill("#message", "how many memories?")
    await page.click("#send")

    answer = page.locator(".msg.faa").last
    # The model's two rounds take longer than expect()'s 5 s on a busy machine: wait as long as the page would.
    reply = "You have stored nothing yet, so the count is 0."
    await expect(answer.locator(".text")).to_have_text(reply, timeout=60_000)
    await expect(answer.locator(".step.ok")).to_have_text(["Adding up the numbers…", "Drawing the chart…"])
    assert await answer.locator(".step").evaluate_all("steps => steps.map(s => s.dataset.tool)") == [
        "aggregate",
        "render_chart",
    ]
    chart = answer.locator("img.chart")
    await expect(chart).to_be_visible()
    assert await chart.evaluate("image => image.naturalWidth") == 800  # the PNG, served under the member's RLS
    assert int(await answer.get_attribute("data-deltas") or 0) >= 1  # the text arrived as content deltas
    await page.reload()  # the history has it
    await expect(page.locator(".msg.me .text").last).to_have_text("how many memories?")
    await expect(page.locator(".msg.faa .text").last).to_have_text("You have stored nothing yet, so the count is 0.")


async def test_a_clarifying_question_offers_its_options_as_buttons(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Unsure", {"Anna": "Europe/Berlin"})
    question = {"question": "Which shop?", "options": ["Lidl", "Rewe"]}
    answers = iter([analysis("other", clarification=question), analysis("chat", reply="Noted: Rewe.")])
    system.llm.script(lambda request: next(answers))
    page = await signed_in(system, new_context, family, "Anna")
    await page.goto(base_url(system) + "/")

    await page.fill("#message", "add 20")
    await page.keyboard.press("Enter")
    option = page.locator("button.option", has_text="Rewe")
    await option.wait_for()
    before = datetime.now(BERLIN).strftime("%H:%M")
    await option.click()

    await expect(page.locator(".msg.faa .text").last).to_have_text("Noted: Rewe.")
    await expect(page.locator(".msg.me .text").last).to_have_text("Rewe")
    # Times are on the member's clock (Berlin), whatever zone the browser is in (UTC here).
    shown = await page.locator(".msg.me .when").last.text_content()
    after = datetime.now(BERLIN).strftime("%H:%M")
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
