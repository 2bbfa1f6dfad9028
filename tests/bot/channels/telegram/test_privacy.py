"""The privacy and roles matrix (`tests/privacy_matrix.py`) on Telegram's tick buttons: a press ticks a list item
for the member who pressed — their own, another member's or one on the household's list, which answering the list
lets a child do too — and another member's private item is no longer there for them. Under a group's message the
list shown again holds nobody's private items, and a reply in the group holds nobody's private rows."""

from __future__ import annotations

import json
import re

import pytest

from tests.bot.channels.telegram import updates
from tests.bot.channels.telegram.conftest import link, post
from tests.bot.channels.telegram.test_flow import delivered
from tests.e2e.scripts import analysis, is_analysis, member_message, tool_results
from tests.fakes.openai_server import ChatRequest, Scripted
from tests.fakes.telegram_server import BOT_USERNAME, FakeTelegram
from tests.privacy_matrix import ROLES, call, expected, family_of_three, rows_for
from tests.system import System

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


def _echoing_model(request: ChatRequest) -> Scripted:
    """A model that searches for what it is asked and says every result it got back, word for word."""
    if is_analysis(request):
        return analysis("query", plan=[{"tool": "search", "args": {"query": "locker code"}}], needs_results=True)
    found = re.findall(r'"content": "([^"]*)"', json.dumps(tool_results(request), ensure_ascii=False))
    return Scripted(content="Found: " + "; ".join(found) if found else "Nothing found.")


async def test_a_group_chat_reply_holds_nobodys_private_rows(tg_system: System, fake_telegram: FakeTelegram) -> None:
    """Alex asks for her locker code in the family group: the model is shown nothing private, and the group reads
    nothing of it; asked in her own chat, the same question finds it."""
    family = await family_of_three(tg_system.admin, "Group reply")
    alex = await link(tg_system, family, "Alex")
    await call(tg_system, family, "Alex", "store", {"content": "My locker code is 4312", "kind": "fact",
                                                   "visibility": "private"})  # fmt: skip
    await call(tg_system, family, "Mia", "store", {"content": "Mia's locker code is 7788", "kind": "fact",
                                                  "hidden_from": "Alex"})  # fmt: skip
    tg_system.llm.script(_echoing_model)

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


def _remembering_model(request: ChatRequest) -> Scripted:
    """Stores what it is told in a private chat; asked anything else, answers with what the conversation it was
    shown holds (as a model asked "what did I just tell you?" would)."""
    text = member_message(request)
    if text.startswith("Private"):
        return analysis("record", plan=[{"tool": "store", "args": {"content": text, "kind": "plan"}}], reply="Saved.")
    shown = "\n".join(str(m["content"]) for m in request.messages if m["role"] == "user")
    return analysis("query", reply="You said: " + shown.split("Recent conversation:")[-1][:300])


async def test_a_group_chat_reply_is_not_written_from_the_members_private_chat(
    tg_system: System, fake_telegram: FakeTelegram
) -> None:
    """What Alex told FAA in her own chat is not the group's conversation: asked in the group what she just said,
    the model is shown only what was said in that group."""
    family = await family_of_three(tg_system.admin, "Group history")
    alex = await link(tg_system, family, "Alex")
    tg_system.llm.script(_remembering_model)
    secret = "Private, only for me: I am planning a zeppelin ride for Sam on December 12"
    await post(tg_system, updates.message(alex, secret))
    await delivered(tg_system, alex)
    tg_system.llm.reset()

    asked = f"@{BOT_USERNAME} what did I just tell you?"
    await post(tg_system, updates.message(alex, asked, chat=updates.GROUP_CHAT))
    [_, in_group] = await delivered(tg_system, alex, 2)

    shown = [str(m["content"]) for request in tg_system.llm.requests for m in request.messages]
    assert not any("zeppelin" in text for text in shown)
    assert "zeppelin" not in in_group["text"]


def _asking_model(request: ChatRequest) -> Scripted:
    """A model that asks back about a zeppelin ride, and otherwise answers "Ok."."""
    if is_analysis(request) and "zeppelin" in member_message(request):
        return analysis("record", clarification={"question": "When is the zeppelin ride?", "options": ["Dec 12"]})
    return analysis("query", reply="Ok.")


def _pending_shown(system: System) -> bool:
    """Whether the model was told of a question FAA asked and is waiting on."""
    return any("Pending question" in str(m["content"]) for r in system.llm.requests for m in r.messages)


@pytest.mark.parametrize("asked_in", ["private", "group"])
async def test_a_question_asked_in_one_chat_is_answered_only_in_that_chat(
    tg_system: System, fake_telegram: FakeTelegram, asked_in: str
) -> None:
    """FAA's question back in Alex's own chat (possibly about something private) is not resumed by what she next
    says in the group, nor one asked in the group by what she says in her own chat; it waits in its own chat."""
    family = await family_of_three(tg_system.admin, f"Pending {asked_in}")
    alex = await link(tg_system, family, "Alex")
    here, there = (None, updates.GROUP_CHAT) if asked_in == "private" else (updates.GROUP_CHAT, None)
    tg_system.llm.script(_asking_model)
    await post(tg_system, updates.message(alex, f"@{BOT_USERNAME} Private: book the zeppelin for Sam", chat=here))
    [question] = await delivered(tg_system, alex)
    assert "zeppelin" in question["text"]
    tg_system.llm.reset()

    await post(tg_system, updates.message(alex, f"@{BOT_USERNAME} what is on today?", chat=there))
    await delivered(tg_system, alex, 2)
    assert not _pending_shown(tg_system)
    if asked_in == "private":  # what was said in the group is the member's own conversation too
        assert not any("zeppelin" in str(m["content"]) for r in tg_system.llm.requests for m in r.messages)

    await post(tg_system, updates.button_press(alex, [("Dec 12", "o:0")], "o:0", chat=here))
    await delivered(tg_system, alex, 3)
    assert _pending_shown(tg_system)  # still waiting where it was asked, and its button answers it


async def test_a_button_pressed_in_a_group_is_answered_for_the_group(
    tg_system: System, fake_telegram: FakeTelegram
) -> None:
    """A pressed button's label is the member's next message, said in the group: its reply is not written from
    the member's own chat."""
    family = await family_of_three(tg_system.admin, "Group button")
    alex = await link(tg_system, family, "Alex")
    tg_system.llm.script(_remembering_model)
    await post(tg_system, updates.message(alex, "Private, only for me: a zeppelin ride for Sam on December 12"))
    await delivered(tg_system, alex)
    tg_system.llm.reset()

    await post(
        tg_system, updates.button_press(alex, [("what did I just tell you?", "o:0")], "o:0", chat=updates.GROUP_CHAT)
    )
    [_, in_group] = await delivered(tg_system, alex, 2)

    assert not any("zeppelin" in str(m["content"]) for r in tg_system.llm.requests for m in r.messages)
    assert "zeppelin" not in in_group["text"]
