"""A planned event called off: "cancel the dentist", "家长会取消了" — the event leaves the calendar with its
reminders. A message that names no event of the calendar is about a reminder."""

from __future__ import annotations

from pydantic import BaseModel

from engine.analysis import PlannedCall
from engine.capabilities._events import (
    EventPick,
    NamedEventChange,
)
from engine.capabilities.capability import Ask, Reading, Situation
from engine.capabilities.phrases import say
from engine.capabilities.reminder import reminder_words
from engine.capabilities.reminder_change import CANCEL
from engine.executor import StepResult

INSTRUCTIONS = """\
A family member calls off one of the family's calendar events. Give the event_id of the event the message is
about, from the list given.
Examples:
Events: [4] on Fri 2026-03-13 at 15:00: Dentist | [6] on Fri 2026-03-13 at 09:00: Dentist for Tom
Message: cancel Tom's dentist → {"event_id":6}
"""


class EventCancel(NamedEventChange):
    name = "event_cancel"
    instructions = INSTRUCTIONS
    description = "a planned event is called off ('cancel the dentist', 'the party is off')"
    examples = {
        "en": ("cancel the dentist on friday", "the parents' evening is cancelled", "swim lesson is off this week"),
        "de": ("der Zahnarzttermin fällt aus", "sag das Elterngespräch ab"),
        "zh": ("家长会取消了", "周五的牙医取消"),
    }
    refines = ("reminder_change", "forget", "fact", "lookup", "sum", "calendar", "update", "shared_list", "budget")
    tools = ("list_events", "cancel_event")
    needs_cue = True

    def claims(self, reading: Reading) -> bool:
        return CANCEL.search(reading.text) is not None and not reminder_words(reading.text)

    otherwise = "reminder_change"  # "cancel the bins" is about a reminder

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        picked = answer if isinstance(answer, EventPick) else situation.decided
        assert isinstance(picked, EventPick)
        return [PlannedCall(id="s1", tool="cancel_event", args={"event_id": picked.event_id})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        return say("event_cancelled", situation.language, text=results[0].result["title"])
