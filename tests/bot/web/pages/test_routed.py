"""The chat page in Chromium, at a phone's and a desktop's size: a chart
asked for is drawn inline in the reply, live and in the history after a reload; small talk written by the model
appears as it is written; a reply from a phrase template appears whole."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from playwright.async_api import BrowserContext, Page, expect

from tests.bot.web.pages.conftest import base_url, signed_in
from tests.e2e.test_routed import answers
from tests.fakes.openai_server import ChatRequest, Scripted
from tests.system import Family, System, make_family, model_calls
from tools.storage import memories

WORKING = re.compile(r"\bworking\b")  # the bubble of an answer still coming
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}


async def chat_as(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]], family: Family, viewport: str
) -> Page:
    page = await signed_in(system, new_context, family, "Anna")
    await page.set_viewport_size(VIEWPORTS[viewport])  # type: ignore[arg-type]
    await page.goto(base_url(system) + "/")
    return page


async def spent(system: System, family: Family, category: str, amount: str) -> None:
    anna = family.user_ids["Anna"]
    async with system.deps.db.household(family.household_id, anna) as conn:
        await memories.insert(
            conn,
            household_id=family.household_id,
            author_id=anna,
            content=f"{category} {amount} EUR",
            understanding={"kind": "expense", "category": category},
            embedding=[0.1] * 64,
            amount=Decimal(amount),
            currency="EUR",
            occurred_at=datetime.now(UTC),
            visibility="household",
            source_inbox_id=None,
        )


async def in_view(page: Page, selector: str) -> None:
    """The element is on screen, above the sticky message box."""
    box = await page.locator(selector).bounding_box()
    composer = await page.locator("#chat-form").bounding_box()
    assert box is not None and composer is not None
    assert box["y"] >= 0 and box["y"] + box["height"] <= composer["y"] + 1, (box, composer)


@pytest.mark.parametrize("viewport", VIEWPORTS)
async def test_a_chart_asked_for_is_shown_inline_live_and_after_a_reload(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]], viewport: str
) -> None:
    family = await make_family(system.admin, f"Routed charts {viewport}", {"Anna": "Europe/Berlin"})
    await spent(system, family, "groceries", "35.50")
    await spent(system, family, "fuel", "60.00")
    system.llm.script(answers())  # the chart makes no model call: any call would fail the test
    page = await chat_as(system, new_context, family, viewport)

    await page.fill("#message", "show me a chart of our spending")
    await page.click("#send")

    answer = page.locator(".msg.faa").last
    await expect(answer).not_to_have_class(WORKING, timeout=60_000)
    await expect(answer.locator(".text")).to_contain_text("95.50 EUR")
    await expect(answer.locator(".step.ok")).to_have_text(["Adding up the numbers…", "Drawing the chart…"])
    chart = answer.locator("img.chart")
    await expect(chart).to_have_count(1)
    described = "Spending by category, this month: fuel 60.00 EUR, groceries 35.50 EUR"  # what it shows, in words
    await expect(chart).to_have_attribute("alt", described)
    await chart.evaluate("image => image.decode()")
    assert await chart.evaluate("image => image.naturalWidth") == 800  # the PNG, served under the member's RLS
    shown = await chart.bounding_box()
    assert shown is not None and shown["width"] <= VIEWPORTS[viewport]["width"] - 32  # inside the bubble
    await in_view(page, ".msg.faa:last-child img.chart")
    assert model_calls(system, "show me a chart of our spending") == []

    await page.reload()  # the history has it
    again = page.locator(".msg.faa").last
    await expect(again.locator(".text")).to_contain_text("95.50 EUR")
    reloaded = again.locator("img.chart")
    await expect(reloaded).to_have_count(1)
    await reloaded.evaluate("image => image.decode()")
    assert await reloaded.evaluate("image => image.naturalWidth") == 800
    assert await reloaded.get_attribute("src") == await chart.get_attribute("src")
    assert await reloaded.get_attribute("alt") == described


# Every version of the newest reply's text, as the page showed it.
# Every text the newest reply showed, in order. Texts set within one task reach the observer in one batch, so each
# change is read from its records (the text node replaced, the one put in), not only from the text as it is now.
WATCH_REPLY = """
window.shownTexts = [];
const seen = (text) => {
  if (text !== null && text !== window.shownTexts[window.shownTexts.length - 1]) window.shownTexts.push(text);
};
new MutationObserver((records) => {
  const current = document.querySelector("#log > .msg.faa:last-child .text");
  for (const record of records) {
    if (record.target !== current) continue;
    for (const node of record.removedNodes) seen(node.textContent);
    for (const node of record.addedNodes) seen(node.textContent);
  }
  seen(current ? current.textContent : null);
}).observe(document, { subtree: true, childList: true, characterData: true });
"""
SMALL_TALK = "I can remember your expenses, notes and plans, answer questions about them, and remind you on time."


@pytest.mark.parametrize("viewport", VIEWPORTS)
async def test_small_talk_shows_as_the_model_writes_it_and_a_template_reply_at_once(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]], viewport: str
) -> None:
    family = await make_family(system.admin, f"Routed stream {viewport}", {"Anna": "Europe/Berlin"})

    def model(request: ChatRequest) -> Scripted:
        return Scripted(content=json.dumps({"reply": SMALL_TALK}), chunk_delay_s=0.1)

    system.llm.script(model)
    page = await signed_in(system, new_context, family, "Anna")
    await page.set_viewport_size(VIEWPORTS[viewport])  # type: ignore[arg-type]
    await page.add_init_script(WATCH_REPLY)
    await page.goto(base_url(system) + "/")

    await page.fill("#message", "what can you do?")
    await page.click("#send")
    answer = page.locator(".msg.faa").last
    # Part of the reply is in the bubble while FAA is still writing it.
    await expect(page.locator(".msg.faa.working .text")).to_contain_text("I can remember", timeout=60_000)
    await expect(answer).not_to_have_class(WORKING, timeout=60_000)
    await expect(answer.locator(".text")).to_have_text(SMALL_TALK)
    shown: list[str] = await page.evaluate("window.shownTexts")
    partial = [text for text in shown if text and text != SMALL_TALK and SMALL_TALK.startswith(text)]
    assert len(partial) >= 5, shown  # it grew piece by piece: the model's chunks, never its JSON
    assert not any("{" in text or '"' in text for text in shown), shown
    assert shown[-1] == SMALL_TALK
    await in_view(page, ".msg.faa:last-child .text")
    calls = model_calls(system, "what can you do?")
    assert [(r.schema_name, r.stream) for r in calls] == [("route_chat", True)]  # small talk is the one call

    await page.evaluate("window.shownTexts = []")
    await page.fill("#message", "thanks!")
    await page.click("#send")
    thanked = page.locator(".msg.faa").last
    await expect(thanked).not_to_have_class(WORKING)
    final = await thanked.locator(".text").text_content()
    assert final and final != SMALL_TALK
    assert await thanked.get_attribute("data-deltas") is None  # a phrase template: no deltas, the text whole
    assert [text for text in await page.evaluate("window.shownTexts") if text != "Working on it…"] == [final]
    assert model_calls(system, "thanks!") == []  # thanks are answered without the model

    await page.reload()
    await expect(page.locator(".msg.faa .text").nth(-2)).to_have_text(SMALL_TALK)


async def test_a_stream_that_breaks_shows_the_whole_answer_after_it_and_never_the_reason(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Routed broken stream", {"Anna": "Europe/Berlin"})
    answer = json.dumps({"reply": SMALL_TALK})
    system.llm.script(lambda request: Scripted(content=answer, chunk_delay_s=0.05, break_stream=request.stream))
    page = await signed_in(system, new_context, family, "Anna")
    await page.add_init_script(WATCH_REPLY)
    await page.goto(base_url(system) + "/")

    await page.fill("#message", "how are you?")
    await page.click("#send")
    bubble = page.locator(".msg.faa").last
    await expect(bubble).not_to_have_class(WORKING, timeout=60_000)
    await expect(bubble.locator(".text")).to_have_text(SMALL_TALK)
    shown: list[str] = await page.evaluate("window.shownTexts")
    calls = model_calls(system, "how are you?")
    assert [request.stream for request in calls] == [True, False]  # the plain call after the break
    shown = shown[shown.index("Working on it…") :]  # from the new bubble on
    cut = shown.index("Working on it…", 1)  # what the broken stream had shown is dropped
    assert any(SMALL_TALK.startswith(text) and text != SMALL_TALK for text in shown[1:cut]), shown
    assert all(text == "Working on it…" or SMALL_TALK.startswith(text) for text in shown), shown  # no reason shown
