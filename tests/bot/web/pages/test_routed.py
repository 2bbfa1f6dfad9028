"""The chat page on the routed engine (the offline default) in Chromium, at a phone's and a desktop's size: a chart
asked for is drawn inline in the reply, live and in the history after a reload; small talk written by the model
appears as it is written; a reply from a phrase template appears whole."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import asyncpg
import pytest
from playwright.async_api import BrowserContext, Page, expect

from tests.bot.web.pages.conftest import base_url, signed_in
from tests.e2e.test_routed import answers
from tests.fakes.openai_server import FakeOpenAI
from tests.system import Family, System, make_family, make_settings, running_system
from tools.storage import memories

VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}


@pytest.fixture
async def routed(
    migrated: Any, fake_llm: FakeOpenAI, redis_url: str, redis: object, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    fake_llm.reset()
    settings = make_settings(migrated, fake_llm.base_url, redis_url, variants={"routed": 1})
    async with running_system(settings, fake_llm, admin_conn) as system:
        yield system


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
    routed: System, new_context: Callable[[], Awaitable[BrowserContext]], viewport: str
) -> None:
    family = await make_family(routed.admin, f"Routed charts {viewport}", {"Anna": "Europe/Berlin"})
    await spent(routed, family, "groceries", "35.50")
    await spent(routed, family, "fuel", "60.00")
    routed.llm.script(answers())  # the chart makes no model call: any call would fail the test
    page = await chat_as(routed, new_context, family, viewport)

    await page.fill("#message", "show me a chart of our spending")
    await page.click("#send")

    answer = page.locator(".msg.faa").last
    await expect(answer).not_to_have_class("working", timeout=60_000)
    await expect(answer.locator(".text")).to_contain_text("95.50 EUR")
    await expect(answer.locator(".step.ok")).to_have_text(["Adding up the numbers…", "Drawing the chart…"])
    chart = answer.locator("img.chart")
    await expect(chart).to_have_count(1)
    await expect(chart).to_have_attribute("alt", "Chart")
    await chart.evaluate("image => image.decode()")
    assert await chart.evaluate("image => image.naturalWidth") == 800  # the PNG, served under the member's RLS
    shown = await chart.bounding_box()
    assert shown is not None and shown["width"] <= VIEWPORTS[viewport]["width"] - 32  # inside the bubble
    await in_view(page, ".msg.faa:last-child img.chart")
    assert routed.llm.requests == []
    await page.screenshot(path=f"/tmp/faa-routed-chart-{viewport}.png")

    await page.reload()  # the history has it
    again = page.locator(".msg.faa").last
    await expect(again.locator(".text")).to_contain_text("95.50 EUR")
    reloaded = again.locator("img.chart")
    await expect(reloaded).to_have_count(1)
    await reloaded.evaluate("image => image.decode()")
    assert await reloaded.evaluate("image => image.naturalWidth") == 800
    assert await reloaded.get_attribute("src") == await chart.get_attribute("src")
