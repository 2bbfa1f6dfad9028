"""A planned event moved: "the dentist moved to 4pm", "ben's dentist appointment is now at 4:15 instead" — the new
time from the grounding (the same day when only a time is given); the event's reminders move with it."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from engine.analysis import PlannedCall
from engine.capabilities._events import (
    EventPick,
    NamedEventChange,
    event_line,
    retimed,
    shift,
    time_only,
)
from engine.capabilities._reminders import reminders_about
from engine.capabilities.capability import Ask, Reading, Reroute, Said, Situation
from engine.capabilities.phrases import say
from engine.capabilities.words import (
    cues,
)
from engine.executor import StepResult

MOVED = cues(
    r"\bis now (?:at|on)\b|\binstead\b|\bjetzt (?:erst |schon )?(?:um|am)\b|\bstatt\b|\bumgelegt\b|改成|改在",
    r"\b(?:is |was |has been |got )?moved\b(?! (?:it|that|this) (?:under|into))",
    r"\bmove (?:the|my|our)\b",
    r"\breschedul",
    r"\bpostpone",
    r"\bverschoben\b|\bverschieb|\bverlegt\b|\bgeschoben\b|\bvorgezogen\b",
    r"改到|推迟到|推到|挪到|改期到|换到|提前到|约到|往后挪|往前挪|延后|改(?=周|星期|礼拜|下周|明天|后天|\d)",
    r"\b(?:pushed|bumped) (?:back )?(?:to|till|until)\b",
    r"\b(?:shifted|moved up|brought forward|pushed back|bumped)\b",
    r"\bnow\b(?=\s*(?:not\b|instead\b|from now on\b|[.!]*\s*$))",  # "the vet is tuesday now not monday"
    r"\b(?:ist|sind|is) (?:jetzt|nun|neu(?:erdings)?) (?:am|um|erst|schon|immer|\w+s)\b",
)
INSTRUCTIONS = """\
A family member says one of the family's calendar events moved. Give the event_id of the event the message
is about, from the list given.
Examples:
Events: [4] on Fri 2026-03-13 at 15:00: Dentist | [6] on Fri 2026-03-13 at 09:00: Dentist for Tom
Message: my dentist moved to 4pm → {"event_id":4}
"""


class EventMove(NamedEventChange):
    name = "event_change"
    instructions = INSTRUCTIONS
    description = "a planned event moved to another time"
    examples = {
        "en": (
            "the dentist moved to 4pm",
            "ben's dentist appointment is now at 4:15 instead",
            "football practice got moved to thursday",
            "parents evening pushed back an hour",
            "the vet is tuesday now not monday",
            "swimming's been shifted to 5:30",
            "grandma's visit got bumped to next weekend",
            "haircut moved up to 10 tomorrow",
            "the school play is on the 14th now",
            "they rescheduled mia's checkup to the 3rd",
            "ballet is half an hour later from now on",
        ),
        "de": (
            "der Zahnarzt ist auf Freitag verschoben",
            "Elternabend jetzt um 19 Uhr statt 18 Uhr",
            "training is jetzt donnerstags",
            "der friseurtermin wurde auf 10 vorgezogen",
            "kinderarzt ist jetzt erst am 12.",
            "besuch bei oma verschiebt sich aufs nächste wochenende",
            "schwimmkurs eine stunde später diesmal",
            "der tierarzt hat auf dienstag umgelegt",
            "die aufführung ist jetzt am 14.",
            "die u-untersuchung von mia wurde auf nächste woche geschoben",
        ),
        "zh": (
            "家长会改到周五",
            "牙医挪到下午四点了",
            "足球训练换到周四了",
            "体检推迟到下个月三号",
            "钢琴课提前到三点半",
            "去奶奶家改成下周末了",
            "理发约到明早十点了 原来是下午",
            "宠物医院那边说改周二",
            "学校演出改到14号了",
            "补习班时间往后挪一个小时",
        ),
    }
    refines = ("update", "fact")
    tools = ("list_events", "move_event", "list_reminders")
    needs_cue = True

    def claims(self, reading: Reading) -> bool:
        if reading.question:
            return False
        shifted = shift(reading.text, reading.grounding) is not None
        return bool(shifted or (MOVED.search(reading.text) and reading.grounding.moments))

    otherwise = "update"  # a correction of a stored note

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        prepared = await super().prepare(situation)
        if isinstance(prepared, Reroute) and await reminders_about(situation):
            return Reroute("reminder_change")  # "schieb das mit oma anrufen eine stunde nach hinten": its reminder
        return prepared

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        picked = answer if isinstance(answer, EventPick) else situation.decided
        assert isinstance(picked, EventPick)
        row = next(row for row in situation.rows if row["event_id"] == picked.event_id)
        moments = sorted(situation.grounding.moments, key=lambda m: not m.has_time)
        delta = shift(situation.text, situation.grounding)
        if delta is not None:  # moved by a span: "pushed back an hour" ("20 minutes later" is no new moment)
            shifted = datetime.fromisoformat(str(row["start"])[:16]) + delta
            args = {"event_id": picked.event_id, "start": shifted.isoformat(timespec="minutes")}
            return [PlannedCall(id="s1", tool="move_event", args=args)]
        moment = moments[0]
        if moment.has_time and time_only(moment.text):  # "moved to 16:30": the same day, a new time
            old = datetime.fromisoformat(str(row["start"])[:16])
            start = retimed(old, moment.at, moment.text).isoformat(timespec="minutes")
        elif moment.has_time:
            start = moment.at.isoformat(timespec="minutes")
        elif row.get("all_day"):
            start = moment.at.date().isoformat()
        else:  # "moved to Saturday": the same time of day on the new day
            start = f"{moment.at.date().isoformat()}T{str(row['start'])[11:16]}"
        return [PlannedCall(id="s1", tool="move_event", args={"event_id": picked.event_id, "start": start})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        result = results[0].result
        return say(
            "event_moved",
            situation.language,
            text=result["title"],
            when=event_line(result, situation.language).split(": ")[0],
        )
