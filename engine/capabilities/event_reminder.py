"""A reminder some time before a planned event: "ping me 1 hour before ben's dentist appointment" — the duration
from the grounding, the event from the calendar by its title's words (or the model's pick among those named alike)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel

from engine.analysis import PlannedCall
from engine.capabilities._events import (
    EventPick,
    event_line,
    named_events,
    upcoming,
    words_of,
)
from engine.capabilities._reminders import recipient, whom_text
from engine.capabilities.capability import Ask, Capability, Reading, Reroute, Said, Situation
from engine.capabilities.phrases import say, when_text
from engine.capabilities.reminder import REMIND, TELL, asks_to_be_told
from engine.capabilities.words import DOING, FILLER, THEN, VAGUE, cues
from engine.executor import StepResult
from engine.grounding.days import find_days

BEFORE = cues(
    r"\bbefore\b",
    r"\bahead of\b",
    r"\bvorher\b|\bvor (?:dem|der|den|meinem|meiner|unserem)\b|\b(?:stunden?|minuten|min|tag|tage|abend)\s+vor\w*\b",
    r"提前|之前|前",
)
# The day before an event, said without a number: a reminder at the event's time one day earlier.
DAY_BEFORE = cues(
    r"\b(?:the )?(?:day|night|evening) before\b|\ba day (?:ahead|before|early)\b",
    r"\bam vortag\b|\b(?:einen )?tag (?:vorher|davor|zuvor)\b|\babend (?:vorher|davor|vorm?)\b",
    r"前一天|前一晚|提前一天",
)
_DAY = 24 * 60


INSTRUCTIONS = """\
You set a reminder before one of the family's calendar events. Give the event_id of the event the message
is about, from the list given.
Examples:
Events: [4] on Fri 2026-03-13 at 15:00: Dentist | [7] on Sat 2026-03-14 at 10:00: Football
Message: remind me an hour before the dentist → {"event_id":4}
Events: [2] 周二 2026-03-10 19:00: 家长会 | [3] 周四 2026-03-12 08:00: 体检
Message: 体检前一小时提醒我 → {"event_id":3}
"""


class EventReminder(Capability):
    name = "event_reminder"
    instructions = INSTRUCTIONS
    description = "asks to be reminded some time before a planned event"
    examples = {
        "en": (
            "remind me an hour before the dentist",
            "ping me 1 hour before ben's dentist appointment",
            "30 min before the parents evening remind me",
            "give me a heads up the day before the vet",
            "nudge me 15 mins before swimming so we leave on time",
            "can u warn me a day ahead of grandma's birthday party",
            "let me know 2 hours before the flight",
            "shout at me half an hour before piano pls",
            "buzz me 10 min before the call with the plumber",
            "tell tom an hour before his football match",
        ),
        "de": (
            "erinnere mich eine Stunde vor dem Zahnarzt",
            "sag mir ne halbe stunde vorm elternabend bescheid",
            "gib mir einen tag vorher bescheid wegen tierarzt",
            "15 min vor dem schwimmkurs anstupsen bitte",
            "am abend vorm ausflug bitte melden",
            "zwei stunden vorm flug melden",
            "sag mir kurz vor der klavierstunde bescheid",
            "gib mir am vortag von omas feier nen schubs 🎂",
            "sag lena ne stunde vorm training bescheid",
            "10 minuten vor dem telefonat mit dem handwerker pingen",
        ),
        "zh": (
            "牙医前一小时提醒我",
            "家长会开始前半小时叫我一声",
            "看兽医的前一天提醒一下",
            "游泳课前15分钟提醒我出门",
            "春游前一晚跟我说一声",
            "航班起飞前两小时提醒",
            "钢琴课开始前十分钟喊我",
            "奶奶生日聚会提前一天告诉我",
            "足球比赛前一个小时提醒小明",
            "体检前一天晚上提醒我别吃东西",
        ),
    }
    refines = ("reminder",)
    tools = ("list_events", "remind_before_event")
    needs_cue = True

    def claims(self, reading: Reading) -> bool:
        text = reading.text
        ahead = bool(reading.grounding.minutes and BEFORE.search(text)) or DAY_BEFORE.search(text) is not None
        return ahead and asks_to_be_told(reading, ahead=True)

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        unique = {row["event_id"]: row for row in await upcoming(situation)}
        if not unique:
            return Said(say("no_upcoming_events", situation.language))
        named = named_events(situation.text, list(unique.values())) or _told_last(situation, list(unique.values()))
        if not named:  # "10 minutes before the guests arrive": no event of the calendar is meant
            return Reroute("reminder")
        situation.rows = [unique[event_id] for event_id in named]
        situation.choices["event_id"] = named
        if len(named) == 1:
            situation.decided = EventPick(event_id=named[0])
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return EventPick if len(situation.rows) > 1 and situation.decided is None else None

    def prompt(self, situation: Situation) -> str:
        listed = " | ".join(f"[{row['event_id']}] {event_line(row, 'en')}" for row in situation.rows)
        return f"Events: {listed}\nMessage: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        picked = answer if isinstance(answer, EventPick) else situation.decided
        event_id = picked.event_id if isinstance(picked, EventPick) else situation.rows[0]["event_id"]
        minutes = situation.grounding.minutes[0] if situation.grounding.minutes else 60
        if not situation.grounding.minutes and DAY_BEFORE.search(situation.text):
            row = next(row for row in situation.rows if row["event_id"] == event_id)
            minutes = _day_before(situation, datetime.fromisoformat(str(row["start"])).replace(tzinfo=None))
        args = {"event_id": event_id, "minutes_before": minutes, "recipient": recipient(situation)}
        return [PlannedCall(id="s1", tool="remind_before_event", args=args)]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        result = results[0].result
        language = situation.language
        shown = whom_text(situation)
        at = datetime.fromisoformat(str(result["next_at"])).replace(tzinfo=None)
        return say(
            "event_reminder_set",
            language,
            whom=shown,
            when=when_text(at, language),
            minutes=result["minutes_before"],
            text=result["text"],
        )


def _day_before(situation: Situation, start: datetime) -> int:
    """Minutes before `start` of a reminder the day before it: at the time of day the message names ("the night
    before school photos, say 8pm", "am vortag um 18 uhr", "the evening before at 7"), else at the event's own
    time."""
    said = DAY_BEFORE.search(situation.text)
    evening = said is not None and re.search(r"night|evening|abend|晚", said.group(), re.IGNORECASE) is not None
    for moment in situation.grounding.moments:
        if moment.has_time and not find_days(moment.text, start.date()):
            at = datetime.combine(start.date() - timedelta(days=1), moment.at.time())
            if evening and at.hour < 12:  # "the evening before at 7"
                at += timedelta(hours=12)
            return int((start - at).total_seconds()) // 60
    return _DAY


def _told_last(situation: Situation, rows: list[dict[str, Any]]) -> list[int]:
    """The events the member's last message named, for a message that names nothing but when to be reminded: "ben's
    got the orthodontist wed at 3:40" then "ping me half an hour before that", "周四下午三点带妈妈去医院复查" then
    "到时候提前一小时提醒我一下" (not "… before the guests arrive")."""
    turns = situation.history.turns
    if not turns:
        return []
    rest = situation.text  # "到时候提前一小时提醒我一下": when, how long before and whom, nothing named
    for said in (_SPAN, BEFORE, DAY_BEFORE, REMIND, TELL, VAGUE, DOING, THEN, FILLER):
        rest = said.sub(" ", rest)
    return [] if words_of(rest) else named_events(turns[-1].user_text, rows)


# How long before ("half an hour", "45 mins", "ne stunde", "一个小时", "二十分钟") and whom to tell.
_SPAN = cues(
    r"\b(?:half|an?|one|two|\d+)\s*(?:an?\s+)?(?:hours?|minutes?|mins?|min|h)\b",
    r"\b(?:'?ne|eine[rn]?|halbe|zwei|\d+)\s*(?:stunden?|minuten|min)\b|\b(?:mich|mir|uns|sag\w*|gib)\b",
    r"[一二两三四五六七八九十半\d]+\s*个?\s*(?:小时|钟头|分钟|分)",
)
