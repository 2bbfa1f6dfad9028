"""The privacy and roles matrix (`tests/privacy_matrix.py`) on Telegram's tick buttons: a press ticks a list item
for the member who pressed — their own, another member's or one on the household's list, which answering the list
lets a child do too — and another member's private item is no longer there for them. Under a group's message the
list shown again holds nobody's private items."""

from __future__ import annotations

import pytest

from tests.bot.channels.telegram import updates
from tests.bot.channels.telegram.conftest import link, post
from tests.fakes.telegram_server import FakeTelegram
from tests.privacy_matrix import ROLES, call, expected, family_of_three, rows_for
from tests.system import System


@pytest.mark.parametrize("actor", list(ROLES))
async def test_a_tick_button_answers_what_the_member_may_see(
    gate: System, fake_telegram: FakeTelegram, actor: str
) -> None:
    family = await family_of_three(gate.admin, f"Ticks {actor}")
    presser = await link(gate, family, actor)
    rows = await rows_for(gate, family, actor, kinds=("list_item",))
    for row in rows:
        data = f"t:{row.id}:1"
        assert (await post(gate, updates.button_press(presser, [("☐ item", data)], data))).status == 200
        ticked = await gate.admin.fetchval("SELECT done_at IS NOT NULL FROM list_items WHERE id = $1", row.id)
        want = expected(ROLES[actor], row, answers=True)
        assert ticked == (want == "changed"), row.label
        answered = fake_telegram.sent("answerCallbackQuery")[-1].fields["text"]
        if want == "not_found":
            assert answered == "That item is no longer on the list.", row.label
        else:
            assert answered == "☑ " + await gate.admin.fetchval("SELECT text FROM list_items WHERE id = $1", row.id)


async def test_a_list_ticked_in_a_group_shows_nobodys_private_items(gate: System, fake_telegram: FakeTelegram) -> None:
    family = await family_of_three(gate.admin, "Group ticks")
    alex = await link(gate, family, "Alex")
    milk = (await call(gate, family, "Sam", "add_list_items", {"items": [{"text": "milk"}]}))["items"][0]["item_id"]
    await call(gate, family, "Alex", "add_list_items", {"items": [{"text": "ring"}], "visibility": "private"})
    group = updates.GROUP_CHAT
    data = f"t:{milk}:1"
    assert (await post(gate, updates.button_press(alex, [("☐ milk", data)], data, chat=group))).status == 200
    shown = fake_telegram.sent("editMessageText")[-1].fields["text"]
    assert "milk" in shown and "ring" not in shown
