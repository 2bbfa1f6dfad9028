"""Texts written for the model (tool names, argument names, repair hints) never reach a member: a failed step is
told in words meant for them."""

from __future__ import annotations

from engine.executor import StepResult
from engine.replies import basic_answer
from tools.errors import RowNotFound


def test_a_failed_step_tells_the_member_the_tools_sentence_or_a_plain_reason_never_the_hint() -> None:
    hint = RowNotFound("cancel_reminder", "there is no reminder 4; list_reminders shows the reminder_ids")
    failed = StepResult("s1", "cancel_reminder", False, error=hint.message, fixable=True, problem=hint.problem)
    answer = basic_answer([failed])
    assert answer == "I could not complete: cancelling the reminder (it is not there)."
