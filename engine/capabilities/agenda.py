"""What is on: "what's on this week?", "was steht an?", "这周有什么安排？" — the stretch of days from the grounding,
listed by the `list_events` tool, no model call."""

from __future__ import annotations

from pydantic import BaseModel

from engine.analysis import PlannedCall
from engine.capabilities._events import WHEN, days_asked, event_line
from engine.capabilities.capability import Ask, Capability, Reading, Reroute, Said, Situation
from engine.capabilities.phrases import say
from engine.capabilities.reminder import reminder_words
from engine.capabilities.words import (
    cues,
)
from engine.executor import StepResult

# The calendar: asking what is on ("what's on this week?"; not "what's on the shopping list"), reminders before an
# event ("an hour before the dentist"), and a member's request to be forgotten altogether.
AGENDA = cues(
    r"\bwhat (?:do |did )?(?:we|i) (?:have |got )?planned\b|\bwhat'?s planned\b|\banything planned\b",
    r"\bwhat(?:'?s| is| do (?:we|i) have)(?: going)? on\b(?!.{0,20}\blist\b)",
    r"\b(?:my|our|the family'?s?) (?:calendar|schedule|agenda|appointments)\b",
    r"\bany (?:plans|appointments|events)\b",
    r"\bwas (?:steht|haben wir|habe ich)\b.{0,30}\b(?:an|vor)\b",
    r"\b(?:meine|unsere) termine\b|\bim kalender\b",
    r"什么安排|有安排吗|日程|日历",
)

# Asking whether a day is taken, said of a day or a time ("anything on tmrw?", "are we busy saturday?", "was ist
# morgen los?", "明晚有没有事"): the calendar when the question names when.
DAY_TAKEN = cues(
    r"(?<!\bhow )\b(?:anything|something|stuff|much) (?:on|happening|going on|in the diary)\b(?!.{0,20}\blist\b)",
    r"\b(?:are|r|am) (?:we|i|the kids) (?:busy|free)\b|\blooking like\b|\bhow does\b.{0,20}\blook\b",
    r"\bwas (?:ist|is)\b.{0,20}\blos\b|\b(?:sind|is|ist) (?:wir|was)\b.{0,30}\b(?:verplant|frei|geplant)\b",
    r"\bwie sieht\b.{0,30}\baus\b",
    r"有(?:什么|啥)事|有没有事|有空吗|忙不忙",
)


def _days_asked(reading: Reading) -> bool:
    """Asked what is on: in the calendar, or on a day or time named ("anything on tmrw?")."""
    when = bool(reading.grounding.moments or reading.grounding.span)
    return AGENDA.search(reading.text) is not None or (when and DAY_TAKEN.search(reading.text) is not None)


class Agenda(Capability):
    name = "calendar"
    description = "asks what is on / planned in the calendar"
    examples = {
        "en": (
            "what's on this week?",
            "what do we have planned for the rest of the week",
            "anything on tomorrow?",
            "are we busy saturday?",
            "whats happening this weekend",
            "r we free sunday afternoon",
            "anything in the diary for next week 🗓️",
            "do the kids have stuff on thursday",
            "what have we got going on today",
            "is there anything planned for the long weekend or are we free",
            "whats tmrw looking like",
            "got anything on friday evening or can we do dinner",
        ),
        "de": (
            "was steht diese Woche an?",
            "haben wir am Wochenende was vor?",
            "was ist morgen los?",
            "was liegt heute so an",
            "sind wir samstag verplant",
            "was hamma nächste woche alles",
            "haben die kinder am donnerstag irgendwas",
            "is am sonntag was geplant oder sind wir frei",
            "was gibts übers lange wochenende an terminen 📅",
            "steht freitag abend schon was",
            "wie sieht die woche aus",
        ),
        "zh": (
            "这周有什么安排？",
            "明天有什么事吗？",
            "周末我们有安排吗",
            "今天都有啥事",
            "下周日程满不满",
            "周六下午我们有空吗",
            "孩子们周四有活动没",
            "这个周末忙不忙啊",
            "五一那几天有啥计划吗",
            "明晚有没有事 想约朋友吃饭",
            "看看下周都排了些啥",
        ),
    }
    refines = ("lookup", "sum", "fact", "shared_list", "forget")
    asks = True
    tools = ("list_events",)

    def claims(self, reading: Reading) -> bool:
        if reminder_words(reading.text):
            return False
        return _days_asked(reading)

    def hint(self, reading: Reading) -> float:
        return 0.2 if reading.grounding.span or reading.grounding.moments else 0.0

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        grounding = situation.grounding
        reading = Reading(situation.text, grounding, question=True, reminder_just_sent=False)
        if _days_asked(reading) or grounding.period or grounding.moments or grounding.span:
            return None
        if WHEN.search(situation.text):
            return Reroute("lookup")  # "when is …" asks of one thing: its coming event, else the notes
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return None

    def prompt(self, situation: Situation) -> str:
        return ""

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        first, days = days_asked(situation)
        return [PlannedCall(id="s1", tool="list_events", args={"start": first.isoformat(), "days": days})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        result = results[0].result
        language = situation.language
        rows = result.get("events", [])
        if not rows:
            return say("no_events", language, first=result.get("start", ""), last=result.get("end", ""))
        return "\n".join([say("events", language), *(f"- {event_line(row, language)}" for row in rows)])
