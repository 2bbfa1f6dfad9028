"""The chart capability end to end on the routed engine: a request for a chart, in any of the three languages, is
added up by SQL and drawn without a model call, the image reaches the member with the reply as a signed link (and
in the outbox row every channel sends), the reply states the total, another member's private spending is never
counted, and a period with nothing in it is said, not drawn."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
import pytest

from engine.settings import MediaSettings
from tests.e2e.test_routed import BERLIN, answers, clock, send  # noqa: F401 (fixtures)
from tests.fakes.clock import ManualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.system import Family, System, make_family, model_calls, routed_system
from tests.tools.test_charts import png_size
from tools.storage import memories

SECRET = "test-media-secret-0123456789abcdefghij"


@pytest.fixture
async def charted(
    migrated: Any,
    fake_llm: FakeOpenAI,
    redis_url: str,
    redis: object,
    admin_conn: asyncpg.Connection,
    clock: ManualClock,  # noqa: F811
) -> AsyncIterator[System]:
    media = MediaSettings(secret=SECRET, link_ttl_s=600)
    async with routed_system(migrated, fake_llm, redis_url, admin_conn, clock=clock, media=media) as system:
        yield system


async def spent(
    system: System,
    family: Family,
    author: str,
    category: str,
    amount: str,
    when: datetime,
    *,
    visibility: str = "household",
) -> None:
    async with system.deps.db.household(family.household_id, family.user_ids[author]) as conn:
        await memories.insert(
            conn,
            household_id=family.household_id,
            author_id=family.user_ids[author],
            content=f"{category} {amount} EUR",
            understanding={"kind": "expense", "category": category},
            embedding=[0.1] * 64,
            amount=Decimal(amount),
            currency="EUR",
            occurred_at=when,
            visibility=visibility,
            source_inbox_id=None,
        )


async def household_spending(system: System, clock: ManualClock) -> Family:  # noqa: F811
    """Anna's and Ben's spending: 128.20 EUR this month that Anna may see (10.00 of it her own private), 41.00 last
    month, and 500.00 this month that Ben keeps private."""
    family = await make_family(system.admin, "Charts", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    now = clock.now() - timedelta(minutes=1)
    last_month = now.replace(day=1, hour=12) - timedelta(days=1)
    await spent(system, family, "Anna", "groceries", "35.50", now)
    await spent(system, family, "Ben", "groceries", "22.70", now)
    await spent(system, family, "Anna", "fuel", "60.00", now)
    await spent(system, family, "Anna", "pharmacy", "10.00", now, visibility="private")
    await spent(system, family, "Ben", "electronics", "500.00", now, visibility="private")
    await spent(system, family, "Anna", "groceries", "41.00", last_month)
    return family


async def tools_called(system: System, body: dict[str, Any]) -> tuple[str, list[str]]:
    raw = await system.admin.fetchval("SELECT trace FROM interactions WHERE inbox_id = $1", body["message_id"])
    trace = json.loads(raw)
    return trace["route"], [step["tool"] for step in trace["steps"] if step["event"] == "tool.call"]


async def test_a_chart_is_drawn_without_the_model_and_reaches_the_member_with_the_total(
    charted: System,
    clock: ManualClock,  # noqa: F811
) -> None:
    family = await household_spending(charted, clock)
    charted.llm.script(answers())

    body = await send(charted, family, "can u show me a graph of what we spent this month")

    assert body["outcome"] == "answered", body
    assert "128.20 EUR" in body["reply"] and "this month" in body["reply"]
    assert "500" not in body["reply"] and "628.20" not in body["reply"]  # Ben's private spending is his
    assert model_calls(charted, "can u show me a graph of what we spent this month") == []
    assert await tools_called(charted, body) == ("chart", ["aggregate", "render_chart"])
    [item] = body["media"]
    image = await charted.client.get(item["url"])
    assert image.status == 200 and png_size(await image.read()) == (800, 500)
    assert "groceries 58.20 EUR" in item["description"]  # what the chart shows, in words, for who cannot see it
    payload = await charted.admin.fetchval("SELECT payload FROM outbox WHERE inbox_id = $1", body["message_id"])
    assert json.loads(payload)["media_ids"] == [item["id"]]  # what Telegram, Threema and email attach
    again = await charted.client.get(f"/v1/messages/{body['message_id']}", headers=family.auth("Anna"))
    assert (await again.json())["media"][0]["description"] == item["description"]  # and read back later


async def test_german_and_chinese_requests_are_answered_in_their_language(
    charted: System,
    clock: ManualClock,  # noqa: F811
) -> None:
    family = await household_spending(charted, clock)
    charted.llm.script(answers())

    german = await send(charted, family, "zeig mir ein diagramm der ausgaben")
    chinese = await send(charted, family, "给我看看这个月的开销图")

    assert german["reply"].startswith("Hier ist das Diagramm eurer Ausgaben diesen Monat")
    assert "128.20 EUR" in german["reply"]
    assert chinese["reply"].startswith("这是这个月支出的图表") and "128.20 EUR" in chinese["reply"]
    assert len(german["media"]) == 1 and len(chinese["media"]) == 1
    assert model_calls(charted, "zeig mir ein diagramm der ausgaben", "给我看看这个月的开销图") == []


async def test_a_change_over_time_adds_up_the_recent_months(
    charted: System,
    clock: ManualClock,  # noqa: F811
) -> None:
    family = await household_spending(charted, clock)
    charted.llm.script(answers())

    body = await send(charted, family, "how has our spending changed over the last months")

    assert "169.20 EUR" in body["reply"] and "month by month" in body["reply"]  # this month's and last month's
    assert await tools_called(charted, body) == ("chart", ["aggregate", "render_chart"])
    assert len(body["media"]) == 1


async def test_a_period_with_nothing_in_it_is_said_and_no_chart_is_drawn(
    charted: System,
    clock: ManualClock,  # noqa: F811
) -> None:
    family = await household_spending(charted, clock)
    charted.llm.script(answers())

    body = await send(charted, family, "chart of our spending last year")

    assert body["outcome"] == "answered"
    assert body["reply"] == "I found no spending last year, so there is nothing to chart yet."
    assert body.get("media", []) == []
    assert await tools_called(charted, body) == ("chart", ["aggregate"])
    assert await charted.admin.fetchval("SELECT count(*) FROM media WHERE household_id = $1", family.household_id) == 0


async def test_a_sum_question_is_still_answered_by_sum(
    charted: System,
    clock: ManualClock,  # noqa: F811
) -> None:
    family = await household_spending(charted, clock)
    charted.llm.script(
        answers(sum={"op": "sum", "categories": ["groceries"], "whose": "household", "group_by": "none",
                     "period": "this_month"})
    )  # fmt: skip

    body = await send(charted, family, "how much did we spend on groceries this month?")

    assert "58.20 EUR" in body["reply"]
    assert await tools_called(charted, body) == ("sum", ["aggregate"])
    assert body.get("media", []) == []


async def test_a_follow_up_names_another_period_and_gets_its_own_chart(
    charted: System,
    clock: ManualClock,  # noqa: F811
) -> None:
    family = await household_spending(charted, clock)
    charted.llm.script(answers())
    await send(charted, family, "can u show me a graph of what we spent this month")

    body = await send(charted, family, "and last month?")

    assert "41.00 EUR" in body["reply"] and "last month" in body["reply"]
    assert await tools_called(charted, body) == ("chart", ["aggregate", "render_chart"])
    assert len(body["media"]) == 1
