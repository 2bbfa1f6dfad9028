"""Texts written for the model (tool names, argument names, repair hints) never reach a member."""

from __future__ import annotations

import pytest

from engine.executor import StepResult
from engine.replies import basic_answer, model_words, readable
from tools.errors import RowNotFound
from tools.registry import default_registry

WORDS = model_words(default_registry())
MISSING_ITEM = StepResult(
    "s1", "update_list_item", False, error="there is no item 9 on any list; take ids from show_list", fixable=True,
    writes=True, problem="not_found",
)  # fmt: skip


@pytest.mark.parametrize(
    "reply",
    [
        "I couldn't do that: take ids from show_list.",
        "Sorry — list_reminders shows the reminder_ids, let me check.",
        "Find the memory_id with search first.",
        "no row has an id that large; take ids from tool results",
        "The add_list_items call failed.",
    ],
)
def test_a_reply_quoting_a_hint_for_the_model_becomes_a_plain_account(reply: str) -> None:
    readable_reply = readable(reply, [MISSING_ITEM], WORDS)
    assert readable_reply == basic_answer([MISSING_ITEM])
    assert "show_list" not in readable_reply and "ids" not in readable_reply
    assert "changing the list item (it is not there)" in readable_reply


@pytest.mark.parametrize(
    "reply",
    [
        "Here is your shopping list: milk, eggs, flour.",
        "Saved: dentist on Friday at 9.",
        "Write to anna_mueller@example.com about the party.",  # a word with an underscore, not a tool's
        "Der Einkaufszettel: Milch, Eier.",
        "已记下：周五看牙医。",
    ],
)
def test_an_ordinary_reply_stays(reply: str) -> None:
    assert readable(reply, [MISSING_ITEM], WORDS) == reply


def test_a_failed_step_tells_the_member_the_tools_sentence_or_a_plain_reason_never_the_hint() -> None:
    hint = RowNotFound("cancel_reminder", "there is no reminder 4; list_reminders shows the reminder_ids")
    failed = StepResult("s1", "cancel_reminder", False, error=hint.message, fixable=True, problem=hint.problem)
    answer = basic_answer([failed])
    assert answer == "I could not complete: cancelling the reminder (it is not there)."
    assert readable(answer, [failed], WORDS) == answer
