"""What the calendar capabilities share: the coming events a message may name (by the words of their titles), how an
event reads to the member, the stretch of days a question asks about, a time of day said without a day, and the span
a thing is moved by (which reminders share)."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict

from engine.capabilities.capability import Ask, Capability, Picked, Reroute, Said, Situation
from engine.capabilities.phrases import when_text
from engine.capabilities.topics import same_word
from engine.capabilities.words import FILLER, cues
from engine.grounding import Grounding
from engine.grounding.language import han_pairs

_UPCOMING_DAYS = 60


_WORD = re.compile(r"[^\W\d_]{3,}")


# The routes' own words, which name no event ("remind me an hour before", "cancel", "moved").
_NOT_NAMES = re.compile(
    r"remind\w*|before|ahead|hours?|minutes?|mins?|moved?|cancel\w*|call|off|erinner\w*|vorher|stunden?|minuten|"
    r"verschoben|verlegt|absagen|abgesagt|termin",
    re.IGNORECASE,
)


# A time of day with no day: "16:30", "at 5pm", "um 18 Uhr", "half 5", "halb 6", "quarter to 5", "晚上九点".
_CLOCK_ONLY = re.compile(
    r"(?:at |um |@|to |auf |gegen |till |until |til |bis )?(?:"
    r"(?:half|quarter (?:past|to)|halb|viertel (?:nach|vor)) (?:\d{1,2}|\w+)(?:\s*(?:am|pm|uhr))?"
    r"|\d{1,2}(?:[:.h]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|uhr|o'?clock|h)?"
    r"|noon|midnight|mittags?|mitternacht"
    r"|(?:上午|下午|晚上|早上|中午)?\s*(?:\d{1,2}|[一二三四五六七八九十]{1,3})"
    r"(?:[:：]\d{2}|点(?:半|钟|[一三]刻|\d{1,2}分?|[一二三四五六七八九十]{1,3}分?)?)"
    r")",
    re.IGNORECASE,
)


def days_asked(situation: Situation) -> tuple[date, int]:
    """(first day, number of days) the question is about: the named period's rest, the day named, or a week."""
    now = situation.run.deps.clock.now()
    today = now.astimezone(zone(situation)).date()
    period = situation.grounding.period
    if period == "today":
        return today, 1
    if period == "this_week":
        return today, 7 - today.weekday()
    if period == "this_month":
        following = (today.replace(day=1) + timedelta(days=32)).replace(day=1)
        return today, (following - today).days
    days = [m.at.date() for m in situation.grounding.moments if m.at.date() >= today]
    if days:
        return days[0], 1
    return today, 7


def zone(situation: Situation) -> ZoneInfo:
    return ZoneInfo(situation.run.timezone)


def event_line(row: dict[str, Any], language: str) -> str:
    whose = row.get("whose")
    return f"{starts(row, language)}: {row.get('title', '')}" + (
        f" ({whose})" if whose and whose != "household" else ""
    )


def starts(row: dict[str, Any], language: str) -> str:
    """When an event (as the event tools return it) starts, as the member reads it."""
    start = str(row.get("start", ""))
    if row.get("all_day") or len(start) <= 10:
        return when_text(datetime.fromisoformat(start[:10]), language, with_time=False)
    return when_text(datetime.fromisoformat(start).replace(tzinfo=None), language)


class EventPick(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event_id: Annotated[int, Picked]


def named_events(text: str, rows: list[dict[str, Any]]) -> list[int]:
    """The events whose title shares the most words with the message (none when no title shares a word); a word
    shared in another form counts (`topics.same_word`: "bens zahnarzttermin" names "Zahnarzt Ben")."""
    said = words_of(text)
    scores = {
        row["event_id"]: sum(any(same_word(word, one) for one in said) for word in words_of(str(row["title"])))
        for row in rows
    }
    best = max(scores.values(), default=0)
    return [] if best == 0 else [event_id for event_id, score in scores.items() if score == best]


def words_of(text: str) -> set[str]:
    """Words of three letters or more, and pairs of Chinese characters (Chinese has no spaces between words)."""
    pairs = han_pairs(text)
    words = {word.lower() for word in _WORD.findall(text)}
    return {word for word in words if not (FILLER.fullmatch(word) or _NOT_NAMES.fullmatch(word))} | pairs


class NamedEventChange(Capability):
    """A change to the coming event the message names; the model picks only among events named alike. A message
    that names no event of the calendar goes to `otherwise`."""

    otherwise: str

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        rows = await upcoming(situation)
        named = named_events(situation.text, rows)
        if not named:
            return Reroute(self.otherwise)
        by_id = {row["event_id"]: row for row in rows}
        situation.rows = [by_id[event_id] for event_id in named]
        situation.choices["event_id"] = named
        if len(named) == 1:
            situation.decided = EventPick(event_id=named[0])
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return EventPick if situation.decided is None else None

    def prompt(self, situation: Situation) -> str:
        listed = " | ".join(f"[{row['event_id']}] {event_line(row, 'en')}" for row in situation.rows)
        return f"Events: {listed}\nMessage: {situation.text}"


def time_only(said: str) -> bool:
    """A moment the member gave as a time of day alone, with no day."""
    return _CLOCK_ONLY.fullmatch(said.strip()) is not None


# What says which half of the day a time is in: "pm", "abends", "晚上", a 24-hour clock ("18 uhr", "08:30").
_HALF_OF_DAY = re.compile(
    r"(?<![^\W\d_])(?:am|pm|a\.m\.|p\.m\.)(?!\w)|\b(?:noon|midnight|morning|afternoon|evening|night|tonight|mittags?|"
    r"mitternacht|morgens|früh|vormittags?|nachmittags?|abends?|nachts?)\b|\b0\d|\b(?:1[3-9]|2[0-3])\b|"
    r"上午|下午|晚上|早上|早晨|中午|凌晨|傍晚|夜里|半夜",
    re.IGNORECASE,
)


def retimed(current: datetime, at: datetime, said: str) -> datetime:
    """`current`'s day at the time of day of `at`, which the member said as `said`. An hour on a twelve-hour clock
    with nothing to say its half of the day ("the bins one at 8 instead", "改到七点半", "lieber erst um 11") is the
    reading nearest the old time: 20:00 for a reminder at 19:00, 11:00 for one at 09:00."""
    hour = at.hour
    hours = [hour] if _HALF_OF_DAY.search(said) else [hour % 12, hour % 12 + 12]
    readings = [current.replace(hour=h, minute=at.minute, second=0, microsecond=0) for h in hours]
    return min(readings, key=lambda reading: (abs(reading - current), reading.hour != hour))


# Asking when one thing is ("wann ist nochmal der elternabend?", "when's ben's next checkup").
WHEN = cues(
    r"^\W*(?:when|what time|what day)\b", r"\bwann\b|\bum wie ?viel uhr\b|\ban welchem tag\b", r"什么时候|几点|哪天"
)


async def upcoming(situation: Situation) -> list[dict[str, Any]]:
    """The calendar's coming one-off events, one row each (its next start)."""
    run = situation.run
    registry = run.deps.registry
    args = registry.validate("list_events", {"days": _UPCOMING_DAYS})
    async with run.transaction() as conn:
        listed = await registry.run(run.tool_context(conn), "list_events", args)
    now = run.deps.clock.now().astimezone(zone(situation)).isoformat(timespec="minutes")
    rows = [row for row in listed.get("events", []) if not row.get("rrule") and str(row["start"]) > now[:16]]
    return list({row["event_id"]: row for row in rows}.values())


# Moved by a span of time ("parents evening pushed back an hour", "schwimmkurs eine stunde später diesmal",
# "补习班时间往后挪一个小时"): later unless the words say earlier.
_SHIFTED = cues(
    r"\b(?:hours?|minutes?|mins?|stunden?|minuten|min)\s+(?:later|earlier|back|forward|später|früher|"
    r"nach hinten|nach vorne?)\b",
    r"\b(?:pushed back|brought forward|moved up|shifted|moved|bumped)\b.{0,12}\b(?:hours?|minutes?|mins?)\b",
    # the verb, the thing, then the way and the span: "push the vet reminder back an hour"
    r"\b(?:push\w*|mov\w*|shift\w*|bump\w*|bring|brought|put)\b.{0,40}\b(?:back|forward|up|later|earlier)\b.{0,12}"
    r"\b(?:hours?|minutes?|mins?)\b",
    r"\bum\b.{0,20}\b(?:stunden?|minuten)\b.{0,20}\b(?:verschieb\w*|verleg\w*|später|früher)",
    r"(?:往后|往前|推迟|提前|延后|挪)\S{0,4}(?:小时|分钟)|(?:晚|早)(?:一|半|两|\d)\S{0,3}(?:小时|分钟)",
)
_EARLIER = cues(r"\b(?:earlier|forward|up|früher|vorgezogen|vor|nach vorne?)\b|提前|往前|早(?:一|半|两|\d)")


def shift(text: str, grounding: Grounding) -> timedelta | None:
    """How far the words move a thing by a span ("pushed back an hour", "half an hour earlier", "提前半小时"):
    later unless they say earlier; None when they name no span moved."""
    if not (grounding.minutes and _SHIFTED.search(text)):
        return None
    span = timedelta(minutes=grounding.minutes[0])
    return -span if _EARLIER.search(text) else span
