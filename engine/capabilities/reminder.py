"""Reminders: "remind me at 9 to call mom", "remnid me evry other tuesday at 6:30pm…", "明天提醒我交电费". The time
and the repetition come from the grounding, whom it is for from the names in the message, and the text stays in
the member's own words."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from engine.analysis import PlannedCall
from engine.capabilities._reminders import recipient, whom_text
from engine.capabilities.capability import Ask, Capability, Picked, Reading, Said, Situation
from engine.capabilities.phrases import say, when_text
from engine.capabilities.words import FILLER, REQUEST, TELLING, TOLD_AGAIN, cues, has_substance, is_vague, own
from engine.executor import StepResult
from engine.grounding import Moment
from engine.grounding.language import name_pattern
from engine.grounding.spelling import normalised

REMIND = cues(
    r"\b(?:ping|nudge|buzz|text) me\b",
    r"\b(?:tell|message) me (?:at|on|in|tomorrow|tonight|every)\b",
    r"\bsag(?:e|st)? mir\b[^.?!]{0,40}\bdass\b|\bmir\b[^.?!]{0,30}\bsagen\b[^.?!]{0,10}\bdass\b",
    rf"\bremind(?! {TOLD_AGAIN})",  # "remind me what the pw is" asks
    r"\breminder",
    r"\bremnd",
    r"\bremid\b",
    r"\brmnd\b",
    r"提醒",
    r"\berinner",
    r"\bwecke? mich|\bwecken\b",  # "morgen früh um halb sieben wecken bitte"
    r"\b(?:set|an) alarm\b|\balarm (?:at|for|clock)\b",
    r"\bwake me\b",
    r"闹钟",
    r"叫醒我",
    r"\bwecker\b",
)


# "Don't let me forget …" asks for a reminder; it is no request to forget anything.
DONT_FORGET = cues(
    r"\b(?:don'?t|do not|never) let me forget\b",
    r"\bmake sure i (?:don'?t|do not) forget\b",
    r"\b(?:don'?t|do not) forget (?:to|that|about)\b",  # "don't forget to call mum tomorrow at 5"
    r"别让我忘",
    r"别忘了|不要忘了|千万别忘|^\W*(?:要|你)?记得",
    r"\blass mich (?:das )?nicht vergessen\b",
    r"\bdamit ich (?:das )?nicht vergesse\b",
    r"\bdenk(?:t|en)? (?:bitte |mal |du )?(?:dran|daran)\b|\b(?:nicht )?vergessen, dass\b|^\W*nicht vergessen\b",
    r"\bvergiss (?:bitte |aber |ja )?nicht\b|\bvergiss\b[^.?!]{1,30}\bnicht\b(?! mehr)",
)


# Asking to be told or nudged, which asks for a reminder only when the message names when ("give me a shout next
# monday", "sag mir ne halbe stunde vorm elternabend bescheid", "下午五点叫我去接孩子"); "let me know what's on" asks.
TELL = cues(
    r"\btell (?:me|us|him|her|them|the \w+|\w+) (?:(?:at|on|by|in|tomorrow|tonight)\b[^.?!]{0,20}?\s)?"
    r"(?:to|that|about)\b|\btell \w+\b(?=.{1,30}\b(?:before|ahead)\b)",
    r"\bpingen\b|\banpingen\b",
    r"\bgive (?:me|us|him|her|\w+) (?:a |an )?(?:shout|heads[- ]?up|nudge|ping|buzz|bell)\b",
    r"\blet (?:me|us) know\b(?!\s+(?:what|when|if|how|whether|where|which|who))",
    r"\b(?:warn|shout at) (?:me|us|him|her)\b",
    r"\bmake sure (?:i|we)\b",
    r"\b(?:ping|nudge|buzz) \w+\b",
    r"\bbescheid\b",
    r"\b(?:an)?stups\w*|\bschubs\b",
    r"(?<!mich )(?<!sich )(?<!uns )\b(?:bitte )?melden\b",
    r"\b(?:dran|daran) denken\b|\b(?:muss|müssen|soll|sollte|sollten)\s+(?:ich|wir)\b.{0,40}\ban\b.{1,40}\bdenken\b",
    r"\b(?:need|have|got|must) to remember\b|\bmust remember\b",
    r"\b(?:den|der|dem) \w+ sagen\b|\bsagen,? (?:sie|er|dass)\b|\bsag(?:e|st)? \w+\b[^.?!]{0,40}\bdass\b",
    r"(?<!再)叫我|(?<!再)喊我|说一声|告诉我|通知我|(?<![还不没])记得",  # "再叫我" is said of a reminder just sent
    r"(?<!再)(?:叫|喊|告诉|通知)\s*(?:他|她|[A-Za-z]+)\s*(?=[\u4e00-\u9fff])",  # "七点半叫Ben带上游泳的东西"
)


def reminder_words(text: str) -> bool:
    """The message speaks of a reminder: "remind me", "reminder", "don't let me forget"."""
    return REMIND.search(text) is not None or DONT_FORGET.search(text) is not None


def asks_to_be_told(reading: Reading, *, ahead: bool = False) -> bool:
    """The message asks for a reminder: it speaks of one, or asks to be told or nudged at a time it names (or,
    `ahead`, before an event: "gib mir am vortag von omas feier nen schubs")."""
    if reminder_words(reading.text):
        return True
    grounding = reading.grounding
    timed = ahead or grounding.moments or grounding.repeats or grounding.minutes
    asked = reading.question and not REQUEST.search(reading.text)  # "can u warn me …" asks for it to be done
    return bool(timed) and not asked and TELL.search(reading.text) is not None


class ReminderAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)] = Field(
        description="what to remind of, short, in the member's language"
    )
    time: Annotated[str | None, Picked] = None


INSTRUCTIONS = """\
You set reminders for a family. The time is already found. Write `text`: what the reminder
says when it fires, short, in the member's language, without the time (e.g. "Call the dentist", "给牙医打电话",
"Mülltonnen rausstellen"). When several times are listed, `time` is the key of the one the reminder is for.
Examples:
Message: Remind me tomorrow at 8 am to call the dentist → {"text":"Call the dentist","time":"t1"}
Message: 下午四点半提醒我去接孩子 → {"text":"去接孩子","time":"t1"}
Message: Erinnere Ben jeden Montag um 7:30 an den Müll → {"text":"Müll rausbringen","time":"r1"}
"""


class Reminder(Capability):
    name = "reminder"
    instructions = INSTRUCTIONS
    description = "asks to be reminded (or to remind someone) at a time"
    examples = {
        "en": (
            "remind me at 9 to call mom",
            "remnid me evry other tuesday at 6:30pm to put the paper bin out",
            "weekdays at 7 remind ben to take his lunch",
            "don't let me forget the parcel tomorrow",
            "can you ping me tomorrow morning about the car insurance",
            "nudge me at 5 to pick up mia from ballet",
            "every sunday night tell the kids to pack their school bags",
            "i need to renew my passport, give me a shout next monday",
            "ping tom at 8am and 8pm every day this week to take his antibiotics",
            "make sure i ring the landlord on thursday",
            "first of every month remind me to pay the cleaner",
            "in 20 mins tell me to take the washing out 🧺",
        ),
        "de": (
            "erinnere mich morgen um 9 an den Zahnarzt",
            "Kannst du mir morgen um 8 Uhr sagen, dass ich die Mülltonnen rausstellen soll?",
            "sag mir um 17 uhr dass ich mia vom ballett abholen muss",
            "jeden sonntag abend den kids sagen sie sollen ranzen packen",
            "lass mich nicht vergessen das paket morgen abzuholen",
            "donnerstag früh dran denken den vermieter anzurufen",
            "am ersten jedes monats an die putzfrau zahlen erinnern",
            "in 20 min wäsche aufhängen, stups mich an 🧺",
            "stups tom die woche jeden tag um 8 und um 20 uhr wegen antibiotikum an",
            "nächsten montag wegen reisepass verlängern melden",
            "wochentags um 7 ben ans pausenbrot erinnern",
        ),
        "zh": (
            "明天提醒我交电费",
            "每周一早上八点提醒我倒垃圾",
            "下午五点叫我去接孩子",
            "别让我忘了明天取快递",
            "每个月一号提醒我给阿姨转工资",
            "二十分钟后提醒我晾衣服",
            "周日晚上提醒孩子们收拾书包",
            "周四上午记得叫我给房东打电话",
            "一周内每天早晚八点提醒小明吃药",
            "下周一提醒我去续护照",
            "工作日早上七点提醒老公带饭",
        ),
    }
    refines = (
        "fact",
        "expense",
        "lookup",
        "sum",
        "shared_list",
        "event_change",
        "budget",
        "update",
        "calendar",
        "unclear",
    )
    tools = ("schedule_reminder",)
    needs_cue = True

    def claims(self, reading: Reading) -> bool:
        return asks_to_be_told(reading)

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        if is_vague(situation.text) or _of_nothing(situation):  # "明天那个别忘了", "remind me tmrw": of what?
            return Ask(say("ask_what", situation.language))
        keys = [m.key for m in situation.grounding.moments] + [r.key for r in situation.grounding.repeats]
        if not keys:
            shown = whom_text(situation)
            return Ask(say("ask_when", situation.language, whom=shown))
        situation.choices["time"] = keys
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel]:
        return ReminderAnswer

    def prompt(self, situation: Situation) -> str:
        found = situation.grounding.describe()
        return f"Found: {found}\nMessage: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        assert isinstance(answer, ReminderAnswer)
        key = answer.time if answer.time in situation.choices["time"] else situation.choices["time"][0]
        if len(situation.choices["time"]) == 1:
            key = situation.choices["time"][0]
        args: dict[str, Any] = {"text": own_words(situation, answer.text), "recipient": recipient(situation)}
        repeat = next((r for r in situation.grounding.repeats if r.key == key), None)
        if repeat is not None:
            args["when"] = repeat.first.isoformat(timespec="minutes")
            args["rrule"] = repeat.rrule
        else:
            moment = next(m for m in situation.grounding.moments if m.key == key)
            args["when"] = _still_ahead(situation, moment).isoformat(timespec="minutes")
        return [PlannedCall(id="s1", tool="schedule_reminder", args=args)]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        result = results[0].result
        language = situation.language
        shown = whom_text(situation)
        when = when_text(datetime.fromisoformat(str(result["next_at"])).replace(tzinfo=None), language)
        if result.get("rrule"):
            repeat = next((r for r in situation.grounding.repeats), None)
            rule = repeat.text if repeat is not None else str(result["rrule"])
            return say("reminder_repeats", language, whom=shown, rule=rule, when=when, text=result["text"])
        return say("reminder_set", language, whom=shown, when=when, text=result["text"])


# The words that ask for the reminder, with whom it is for: what is left of the message is what to remind of.
_ASKING = re.compile(
    r"^\W*(?:(?:please|pls|hey|can you|could you|would you|kannst du|könntest du|bitte)\s+)*"
    r"(?:(?:remind|remnid|rmnd|ping|nudge|tell|erinnere?)\s+(?:me|us|him|her|them|mich|uns|ihn|sie|@?\w+)"
    r"(?:\s+(?:bitte|daran))*(?:\s*,?\s*(?:to|that|about|of|dass|an|zu)\b)?"
    r"|(?:请)?(?:提醒|叫)(?:我们|我|他|她|[A-Za-z]+|\w{1,8}?)(?=\S))",  # a Latin name whole: "叫Ben带上"
    re.IGNORECASE,
)


# What to remember, framed by the words of asking in German ("muss ich an das turnzeug für mia denken", "sag mir,
# dass ich die spülmaschine ausräume"): the thing itself is the frame's object.
_FRAMED = re.compile(
    r"\b(?:muss|müssen|soll|sollte|sollten)\s+(?:ich|wir)\s+(?:noch |unbedingt |bitte |dran )*an\s+"
    r"(?P<thing>.{2,80}?)\s+denken\b|"
    r"\bdass (?:ich|wir|er|sie|du) (?P<clause>.{2,80}?)\s*(?:soll|sollen|muss|müssen)?\W*$|"
    # the thing before the verb at the end: "in ner halben stunde ans nudeln abgießen erinnern"
    r"\ban(?:s)?\s+(?P<object>.{2,80}?)\s+erinner\w*(?:\s+werden)?\W*$",
    re.IGNORECASE,
)


def own_words(situation: Situation, said: str) -> str:
    """What to remind of in the member's own words: the model's text when every word of it is the message's (and,
    when the message frames the thing, the frame's: "an das turnzeug für mia denken" is not "Mia denken"), else the
    message less the words of asking and of time."""
    text = normalised(situation.text, situation.language)
    framed = _FRAMED.search(situation.text) or _FRAMED.search(text)  # the member's spelling where it reads as is
    if framed:
        thing = _without_when(situation, framed.group("thing") or framed.group("clause") or framed.group("object"))
        return said if own(said, thing) and own(thing, said) else (thing or said)[:120]  # the whole thing, no more
    if own(said, text):
        return said
    rest = _ASKING.sub("", _without_when(situation, text))
    rest = re.sub(r"\s+", " ", rest).strip(" ,.!?;:，。！？")
    return (rest or said)[:120]


def _without_when(situation: Situation, text: str) -> str:
    """`text` less the times and repeats the grounding found in it."""
    said_when = [m.text for m in situation.grounding.moments] + [r.text for r in situation.grounding.repeats]
    for found in said_when:
        text = re.sub(re.escape(found), " ", text, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", _CLOCK.sub(" ", text)).strip(" ,.!?;:，。！？")


# Whom a reminder is for, said beside the words of telling: nothing to be reminded of.
_WHOM = cues(r"\b(?:me|us|him|her|them|mich|uns|ihn|sie|ihm|ihr)\b", r"我们|我|他们|他|她")


def _of_nothing(situation: Situation) -> bool:
    """The message names nothing to be reminded of beside its times and whom to tell ("remind me tmrw", "明天提醒我",
    "ping ben at 5"); a wake-up or an alarm names its own ("wake me at 7")."""
    said = _without_when(situation, normalised(situation.text, situation.language))
    rest = re.sub(rf"(?<![A-Za-z])(?:{TELLING})", " ", said, flags=re.IGNORECASE)
    for member in situation.run.members:
        rest = name_pattern(member.name).sub(" ", rest)
    rest = FILLER.sub(" ", _WHOM.sub(" ", _CLOCK.sub(" ", rest)))
    return not has_substance(rest)


_CLOCK = re.compile(r"\b(?:at|um|gegen)\s+\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|uhr)?(?!\w)", re.IGNORECASE)


def _still_ahead(situation: Situation, moment: Moment) -> datetime:
    """When to remind: the moment, or, for a morning hour today that has passed and whose half of the day the words
    leave open, the evening's ("erinner mich heute um viertel nach acht", said at ten, is 20:15)."""
    now = situation.run.deps.clock.now().astimezone(ZoneInfo(situation.run.timezone)).replace(tzinfo=None)
    evening = moment.at + timedelta(hours=12)
    if moment.half_open and moment.at <= now < evening and evening.date() == moment.at.date():
        return evening
    return moment.at
