"""Shared lists on Telegram end to end: a message shows the list with a tick button per item; a press ticks the
item for the member who pressed and edits the message; a redelivered press changes nothing twice."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from bot.channels.telegram.checklists import read_tick
from engine.settings import Settings
from tests.bot.channels.telegram import updates
from tests.bot.channels.telegram.conftest import link, post
from tests.bot.channels.telegram.test_flow import delivered
from tests.e2e.test_routed import answers
from tests.fakes.openai_server import ChatRequest, FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.system import System, make_family, running_system


@pytest.fixture
async def tg_routed(
    tg_settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    async with running_system(tg_settings, fake_llm, admin_conn) as running:
        yield running


def shared_list(**fields: Any) -> Any:
    def answer(request: ChatRequest) -> dict[str, Any]:
        assert request.schema is not None
        action = request.schema["properties"]["action"]["enum"][0]
        return {"action": action, "list_name": "shopping", "items": [], "assignee": None, **fields}

    return answer


@pytest.mark.parametrize(
    ("data", "read"),
    [("t:12:1", (12, True)), ("t:12:0", (12, False)), ("t:12", None), ("t:-1:1", None), ("t:x:1", None),
     ("t:0:1", None), (f"t:{2**63}:1", None), ("o:1", None), ("t:1:2", None)],
)  # fmt: skip
def test_only_our_tick_buttons_are_read(data: str, read: tuple[int, bool] | None) -> None:
    assert read_tick(data) == read


async def test_the_list_comes_with_tick_buttons_and_a_press_ticks_the_item(
    tg_routed: System, fake_telegram: FakeTelegram
) -> None:
    family = await make_family(tg_routed.admin, "TgList", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    anna = await link(tg_routed, family, "Anna")
    tom = await link(tg_routed, family, "Tom")
    tg_routed.llm.script(answers(shared_list=shared_list(items=[{"text": "milk", "quantity": None},
                                                                {"text": "flour", "quantity": "2 kg"}])))  # fmt: skip
    await post(tg_routed, updates.message(anna, "add milk and 2 kg flour to the shopping list"))
    await delivered(tg_routed, anna)
    tg_routed.llm.script(answers(shared_list=shared_list()))
    await post(tg_routed, updates.message(anna, "what's on the shopping list?"))
    await delivered(tg_routed, anna, count=2)

    shown = fake_telegram.sent("sendMessage")[-1]
    assert shown.fields["text"] == "shopping list:\n• milk\n• 2 kg flour"
    buttons = [(b["text"], b["callback_data"]) for row in shown.json("reply_markup")["inline_keyboard"] for b in row]
    assert [label for label, _ in buttons] == ["☐ milk", "☐ 2 kg flour"]

    press = updates.button_press(tom, buttons, buttons[0][1])  # Tom ticks the milk under Anna's message
    assert (await post(tg_routed, press)).status == 200
    assert (await post(tg_routed, press)).status == 200  # Telegram delivers the same press again
    done = await tg_routed.admin.fetch(
        "SELECT text, done_at IS NOT NULL AS done, done_by FROM list_items WHERE household_id = $1 ORDER BY id",
        family.household_id,
    )
    assert [(r["text"], r["done"], r["done_by"]) for r in done] == [
        ("milk", True, family.user_ids["Tom"]),
        ("flour", False, None),
    ]
    edits = fake_telegram.sent("editMessageText")
    assert len(edits) == 2 and edits[-1].fields["text"] == "shopping list:\n• 2 kg flour\n✅ milk"
    relabelled = [b["text"] for row in edits[-1].json("reply_markup")["inline_keyboard"] for b in row]
    assert relabelled == ["☐ 2 kg flour", "☑ milk"]  # open items first
    assert fake_telegram.sent("answerCallbackQuery")[-1].fields["text"] == "☑ milk"
    assert len(tg_routed.llm.requests) == 2  # a press needs no model


async def test_a_stranger_cannot_tick(tg_routed: System, fake_telegram: FakeTelegram) -> None:
    family = await make_family(tg_routed.admin, "TgStranger", {"Anna": "Europe/Berlin"})
    await link(tg_routed, family, "Anna")
    async with tg_routed.deps.db.household(family.household_id, family.user_ids["Anna"]) as conn:
        list_id = await conn.fetchval(
            "INSERT INTO lists (household_id, name, kind) VALUES ($1, 'shopping', 'shopping') RETURNING id",
            family.household_id,
        )
        item_id = await conn.fetchval(
            "INSERT INTO list_items (household_id, list_id, text) VALUES ($1, $2, 'milk') RETURNING id",
            family.household_id,
            list_id,
        )
    stranger = updates.new_id()
    press = updates.button_press(stranger, [("☐ milk", f"t:{item_id}:1")], f"t:{item_id}:1")
    assert (await post(tg_routed, press)).status == 200
    assert await tg_routed.admin.fetchval("SELECT done_at FROM list_items WHERE id = $1", item_id) is None
    refused = fake_telegram.sent("answerCallbackQuery")[-1]
    assert refused.fields["text"] == "Only members of the household can tick items."
    assert fake_telegram.sent("editMessageText") == []
