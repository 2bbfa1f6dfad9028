"""The privacy and roles matrix (`tests/privacy_matrix.py`) on Telegram's tick buttons: a press ticks a list item
for the member who pressed — their own, another member's or one on the household's list, which answering the list
lets a child do too — and another member's private item is no longer there for them. Under a group's message the
list shown again holds nobody's private items, and a reply in the group holds nobody's private rows."""

from __future__ import annotations

import pytest

from tests.bot.channels.telegram import updates
from tests.bot.channels.telegram.conftest import link, post
from tests.bot.channels.telegram.test_flow import delivered
from tests.e2e.scripts import routed_model
from tests.fakes.telegram_server import BOT_USERNAME, FakeTelegram
from tests.privacy_matrix import ROLES, call, expected, family_of_three, rows_for
from tests.system import Family, System

GROUP = updates.GROUP_CHAT["id"]


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


async def test_a_group_chat_reply_holds_nobodys_private_rows(tg_system: System, fake_telegram: FakeTelegram) -> None:
    """Alex asks for her locker code in the family group: the model is shown nothing private, and the group reads
    nothing of it; asked in her own chat, the same question finds it."""
    family = await family_of_three(tg_system.admin, "Group reply")
    alex = await link(tg_system, family, "Alex")
    await call(tg_system, family, "Alex", "store", {"content": "My locker code is 4312", "kind": "fact",
                                                   "visibility": "private"})  # fmt: skip
    await call(tg_system, family, "Mia", "store", {"content": "Mia's locker code is 7788", "kind": "fact",
                                                  "hidden_from": "Alex"})  # fmt: skip
    tg_system.llm.script(routed_model())

    await post(tg_system, updates.message(alex, f"@{BOT_USERNAME} what is my locker code?", chat=updates.GROUP_CHAT))
    [in_group] = await delivered(tg_system, alex)
    shown = [str(m["content"]) for request in tg_system.llm.requests for m in request.messages]
    assert not any("4312" in text or "7788" in text for text in shown)
    group = [s.fields["text"] for s in fake_telegram.sent("sendMessage") if s.fields["chat_id"] == str(GROUP)]
    assert group and not any("4312" in text or "7788" in text for text in group)
    assert "4312" not in in_group["text"]

    await post(tg_system, updates.message(alex, "what is my locker code?"))
    [_, in_private] = await delivered(tg_system, alex, 2)
    assert "4312" in in_private["text"] and "7788" not in in_private["text"]


def _shown(system: System, words: str) -> bool:
    """Whether any model call so far was shown these words."""
    return any(words in str(m["content"]) for r in system.llm.requests for m in r.messages)


async def test_a_group_chat_reply_is_not_written_from_the_members_private_chat(
    tg_system: System, fake_telegram: FakeTelegram
) -> None:
    """What Alex asked FAA in her own chat is not the group's conversation: "and last month?" goes on from her
    question in her own chat, but not in the group."""
    family = await family_of_three(tg_system.admin, "Group history")
    alex = await link(tg_system, family, "Alex")
    tg_system.llm.script(routed_model())
    await post(tg_system, updates.message(alex, "How much did we spend on zeppelin rides this month?"))
    await delivered(tg_system, alex)
    tg_system.llm.reset()
    await post(tg_system, updates.message(alex, "and last month?"))
    await delivered(tg_system, alex, 2)
    assert _shown(tg_system, "zeppelin rides last month")  # her own chat goes on from her own question
    tg_system.llm.reset()

    await post(tg_system, updates.message(alex, f"@{BOT_USERNAME} and the month before?", chat=updates.GROUP_CHAT))
    [*_, in_group] = await delivered(tg_system, alex, 3)
    assert not _shown(tg_system, "zeppelin")
    assert "zeppelin" not in in_group["text"]


@pytest.mark.parametrize("asked_in", ["private", "group"])
async def test_a_question_asked_in_one_chat_is_answered_only_in_that_chat(
    tg_system: System, fake_telegram: FakeTelegram, asked_in: str
) -> None:
    """FAA's question back in Alex's own chat (possibly about something private) is not resumed by what she next
    says in the group, nor one asked in the group by what she says in her own chat; it waits in its own chat."""
    family = await family_of_three(tg_system.admin, f"Pending {asked_in}")
    alex = await link(tg_system, family, "Alex")
    here, there = (None, updates.GROUP_CHAT) if asked_in == "private" else (updates.GROUP_CHAT, None)
    tg_system.llm.script(routed_model())
    await post(tg_system, updates.message(alex, f"@{BOT_USERNAME} remind Sam to book the zeppelin", chat=here))
    [question] = await delivered(tg_system, alex)
    assert question["payload"] is not None and await _zeppelin_reminders(tg_system, family) == 0

    await post(tg_system, updates.message(alex, f"@{BOT_USERNAME} tomorrow at 5 pm", chat=there))
    await delivered(tg_system, alex, 2)
    assert not _shown(tg_system, "zeppelin") and await _zeppelin_reminders(tg_system, family) == 0

    await post(tg_system, updates.message(alex, f"@{BOT_USERNAME} tomorrow at 5 pm", chat=here))
    await delivered(tg_system, alex, 3)
    assert await _zeppelin_reminders(tg_system, family) == 1  # still waiting where it was asked, and answered there


async def _zeppelin_reminders(system: System, family: Family) -> int:
    return int(
        await system.admin.fetchval(
            "SELECT count(*) FROM reminders WHERE household_id = $1 AND text ILIKE '%zeppelin%'", family.household_id
        )
    )


async def test_a_button_pressed_in_a_group_is_answered_for_the_group(
    tg_system: System, fake_telegram: FakeTelegram
) -> None:
    """A pressed button's label is the member's next message, said in the group: its reply is not written from
    the member's own chat."""
    family = await family_of_three(tg_system.admin, "Group button")
    alex = await link(tg_system, family, "Alex")
    tg_system.llm.script(routed_model())
    await post(tg_system, updates.message(alex, "How much did we spend on zeppelin rides this month?"))
    await delivered(tg_system, alex)
    tg_system.llm.reset()

    await post(tg_system, updates.button_press(alex, [("and last month?", "o:0")], "o:0", chat=updates.GROUP_CHAT))
    [_, in_group] = await delivered(tg_system, alex, 2)

    assert not _shown(tg_system, "zeppelin")
    assert "zeppelin" not in in_group["text"]
