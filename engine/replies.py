"""Replies written without the model: when it failed, or when a budget ran out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.errors import BudgetExceeded

if TYPE_CHECKING:
    from engine.executor import StepResult
    from engine.run import Run

_FAILURE = {
    "en": "Sorry, I couldn't handle that message just now. Nothing you sent is lost — please try again in a moment.",
    "zh": "抱歉，我现在无法处理这条消息。您发送的内容没有丢失，请稍后再试。",
    "de": "Entschuldigung, das konnte ich gerade nicht bearbeiten. Nichts ist verloren — "
    "bitte versuch es gleich noch einmal.",
}

_TOOL_WORDS = {
    "store": "saved",
    "update_memory_fields": "updated",
    "forget": "forgot",
    "restore": "restored",
    "schedule_reminder": "reminder scheduled",
    "cancel_reminder": "reminder cancelled",
    "snooze_reminder": "reminder snoozed",
    "complete_reminder": "reminder marked done",
    "set_quiet_hours": "quiet hours set",
    "add_event": "event added",
    "move_event": "event moved",
    "cancel_event": "event cancelled",
    "remind_before_event": "reminder set",
    "add_list_items": "added to the list",
    "update_list_item": "list item changed",
    "remove_list_item": "taken off the list",
    "clear_done_items": "list cleared",
    "set_budget": "budget set",
    "undo": "undone",
}
# What a step that failed was about, for a member ("I could not complete: changing a memory (…)").
_TOOL_TASKS = {
    "store": "saving it",
    "search": "looking it up",
    "aggregate": "adding it up",
    "update_memory_fields": "changing a memory",
    "forget": "forgetting it",
    "restore": "bringing it back",
    "schedule_reminder": "setting the reminder",
    "list_reminders": "listing the reminders",
    "cancel_reminder": "cancelling the reminder",
    "snooze_reminder": "snoozing the reminder",
    "complete_reminder": "marking the reminder done",
    "add_event": "adding the event",
    "list_events": "reading the calendar",
    "move_event": "moving the event",
    "cancel_event": "cancelling the event",
    "remind_before_event": "setting the reminder",
    "add_list_items": "adding to the list",
    "show_list": "showing the list",
    "update_list_item": "changing the list item",
    "remove_list_item": "taking it off the list",
    "clear_done_items": "clearing the list",
    "set_budget": "setting the budget",
    "budget_status": "reading the budgets",
}


_VOICE_OFF = {
    "en": "I can't listen to voice messages here yet — could you type that for me?",
    "zh": "我暂时还不能听语音消息，可以请您打字发给我吗？",
    "de": "Sprachnachrichten kann ich hier noch nicht anhören — kannst du mir das bitte schreiben?",
}


def in_locale(run: Run, texts: dict[str, str]) -> str:
    """The text in the member's language (English when there is none in it)."""
    me = next((m for m in run.members if m.id == run.message.user_id), None)
    locale = (me.locale if me else "en").split("-")[0].split("_")[0].lower()
    return texts.get(locale, texts["en"])


def failure_text(run: Run) -> str:
    return in_locale(run, _FAILURE)


def voice_not_enabled_text(run: Run) -> str:
    return in_locale(run, _VOICE_OFF)


def basic_answer(results: list[StepResult], budget: BudgetExceeded | None = None) -> str:
    """A plain account of what the tools did, for when the model cannot phrase it."""
    done = [r for r in results if r.ok and r.writes]
    failed = [r for r in results if not r.ok]
    lines = []
    if done:
        lines.append("Done: " + ", ".join(f"{_TOOL_WORDS.get(r.tool, r.tool)}" for r in done) + ".")
    for result in results:
        if result.ok and result.tool == "aggregate" and result.result:
            for group in result.result.get("groups", [])[:10]:
                key = f"{group.get('key')}: " if group.get("key") else ""
                lines.append(f"{key}{group.get('value')} {group.get('currency') or ''}".strip())
    if failed:
        told = "; ".join(f"{_TOOL_TASKS.get(r.tool, 'one step')} ({r.member_reason()})" for r in failed)
        lines.append(f"I could not complete: {told}.")
    if budget is not None and budget.household:
        lines.append("Your household has used up today's allowance for the assistant; I can help again tomorrow.")
    elif budget is not None:
        lines.append(f"I stopped early because this message used up its {budget.budget} budget.")
    return "\n".join(lines) or "Sorry, I couldn't finish that. Please try again."
