"""A planned event called off: "cancel the dentist", "家长会取消了" — the event leaves the calendar with its
reminders. A message that names no event of the calendar is about a reminder."""

from __future__ import annotations

from pydantic import BaseModel

from engine.analysis import PlannedCall
from engine.capabilities._events import (
    EventPick,
    NamedEventChange,
)
from engine.capabilities._reminders import reminders_about
from engine.capabilities.capability import Ask, Reading, Reroute, Said, Situation
from engine.capabilities.phrases import say
from engine.capabilities.reminder import reminder_words
from engine.capabilities.reminder_change import CANCEL
from engine.capabilities.words import cues
from engine.executor import StepResult

# Said of a plan, not of a reminder: "swim lesson is off this week", "kinderturnen fällt diese woche flach",
# "理发那个约黄了" (a reminder is cancelled by `CANCEL`'s words alone).
CALLED_OFF = cues(
    r"\b(?:is|are|'s|it's) off\b(?! to\b)",
    r"\b(?:isn'?t|is not|not) happening\b",
    r"\bscrap (?:the|our|my)\b",
    r"\bnot going to\b.{1,40}\banymore\b",
    r"\bsag\w*\b.{1,40}\bab\W*$",
    r"\bflach\b|\bfindet\b.{0,20}\bnicht statt\b|\bgestrichen\b|\bentfällt\b",
    r"\bstreich (?:den|die|das) \w*(?:termin|stunde|kurs|training|feier|party|ausflug|besuch|treffen)\b",
    r"\b(?:gehen|fahren|kommen) doch nicht\b",
    r"不上了|停一次|不办了|黄了|不去了",
)


# Asked to call something off, rather than told that it is: "cancel the dentist", "sag das Elterngespräch ab",
# "帮我取消". Asked of nothing in the calendar, it is a reminder's to answer.
ASKED_TO_CANCEL = cues(
    r"^\W*(?:(?:actually|oh|ok|okay|so|and|also|please|pls|eigentlich|doch|ach|bitte)\W+)*"
    r"(?:can you |could you |kannst du )?(?:cancel|call off|scrap|streich|sag)\b",
    r"^\W*(?:请|帮我|麻烦)?取消|帮我取消|取消吧",
)


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
        "en": (
            "cancel the dentist on friday",
            "the parents' evening is cancelled",
            "swim lesson is off this week",
            "footy's called off, pitch is flooded",
            "we're not going to the bbq on sat anymore",
            "the vet appointment isnt happening, call it off",
            "piano got cancelled teacher is sick 🤒",
            "scrap the birthday party sunday, ben's ill",
            "no more hairdresser tmrw, they cancelled on me",
            "the school trip is off",
            "dinner at the smiths is cancelled",
        ),
        "de": (
            "der Zahnarzttermin fällt aus",
            "sag das Elterngespräch ab",
            "training is heute abgesagt",
            "wir gehen doch nicht zum grillen am samstag",
            "der friseur hat abgesagt",
            "kinderturnen fällt diese woche flach",
            "der tierarzttermin findet nicht statt",
            "geburtstagsfeier am sonntag is gestrichen, mia is krank",
            "streich den termin beim kinderarzt",
            "klavierstunde entfällt morgen 🙄",
        ),
        "zh": (
            "家长会取消了",
            "周五的牙医取消",
            "明天的游泳课不上了",
            "周六聚餐取消了 人凑不齐",
            "老师生病 钢琴课停一次",
            "宠物医院那个预约取消吧",
            "周日的生日会不办了 孩子发烧",
            "理发那个约黄了",
            "春游取消了 下雨",
            "下周二的体检不去了 帮我取消",
        ),
    }
    refines = ("reminder_change", "forget", "fact", "lookup", "sum", "calendar", "update", "shared_list", "budget")
    tools = ("list_events", "cancel_event", "list_reminders")
    needs_cue = True

    def claims(self, reading: Reading) -> bool:
        called_off = CANCEL.search(reading.text) or CALLED_OFF.search(reading.text)
        return called_off is not None and not reminder_words(reading.text)

    otherwise = "reminder_change"  # "cancel the bins" is about a reminder

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        prepared = await super().prepare(situation)
        if not isinstance(prepared, Reroute) or ASKED_TO_CANCEL.search(situation.text) or situation.history.fired:
            return prepared
        if await reminders_about(situation):
            return prepared
        return Reroute("fact")  # "school says the christmas concert is cancelled": news of a plan FAA does not hold

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        picked = answer if isinstance(answer, EventPick) else situation.decided
        assert isinstance(picked, EventPick)
        return [PlannedCall(id="s1", tool="cancel_event", args={"event_id": picked.event_id})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        return say("event_cancelled", situation.language, text=results[0].result["title"])
