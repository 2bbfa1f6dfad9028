"""Moments a message names ("tomorrow at 9", "in 2 hours", "last Friday", "明天下午三点", "morgen um 9") as wall
times on the member's clock, and durations ("30 minutes", "半小时").

The parsing is the libraries': jionlp for Chinese, ctparse for English and German. What sits here are the guards
around them — a parse made only of a bare number is no date ("2 pills" is not 02:00, "room 305" is not 03:05) —
and the few readings they get wrong ("last Friday" is the past one; a time of day that has passed today means
tomorrow; "in 2 hours" is real time, across a clock change too).
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import ctparse
from ctparse.types import Duration, Interval, Time

with contextlib.redirect_stdout(io.StringIO()):  # jionlp prints a banner on import
    import jionlp

logging.getLogger("ctparse").setLevel(logging.ERROR)  # "failed to produce a result" is an answer, not a problem

CJK = re.compile(r"[\u4e00-\u9fff]")
WEEKDAYS = {
    "monday": "MO", "tuesday": "TU", "wednesday": "WE", "thursday": "TH", "friday": "FR", "saturday": "SA",
    "sunday": "SU", "montag": "MO", "dienstag": "TU", "mittwoch": "WE", "donnerstag": "TH", "freitag": "FR",
    "samstag": "SA", "sonnabend": "SA", "sonntag": "SU",
}  # fmt: skip
WEEKDAY_WORD = re.compile(r"\b(" + "|".join(WEEKDAYS) + r")s?\b", re.IGNORECASE)
_LAST = re.compile(r"\b(?:last|letzten|letzte|letzter|vergangenen|vorigen)\s+(?:" + "|".join(WEEKDAYS) + ")", re.I)
_TODAY = re.compile(r"\b(?:tonight|today|this evening|this afternoon|heute)\b", re.IGNORECASE)
_WEEKEND = re.compile(r"\b(?:this weekend|the weekend|am wochenende|dieses wochenende)\b", re.IGNORECASE)
_DURATION_CUE = re.compile(r"\bin\b|\bnach\b|\blater\b|\bfrom now\b|\bspäter\b", re.IGNORECASE)
_AGO = re.compile(r"\bago\b|\bvor\b", re.IGNORECASE)
_NOON = (
    (re.compile(r"\bnoon\b|\bmittags?\b", re.I), "12:00"),
    (re.compile(r"\bmidnight\b|\bmitternacht\b", re.I), "0:00"),
)
_ONE = re.compile(r"\b(?:in|nach)\s+(?:an?|one|einer|eine|einem)\s+(hour|stunde|minute|day|tag|week|woche)", re.I)
# ctparse productions that only say "a number was here": a parse made of nothing else is not a date.
_BARE_NUMBER_RULES = frozenset({
    "ruleHHMM", "ruleHHMMmilitary", "ruleYear", "ruleDDMM", "ruleDDMMYYYY", "ruleMonthOrdinal", "ruleMonthYear",
    "ruleLatentDOY", "ruleLatentDOM", "ruleDOM1", "ruleDOM2",
})  # fmt: skip
# ctparse reads "8am vitamins" as the 8th and "at 7 tonight" as the 7th: an hour written as a clock time it reads.
_AM_PM = re.compile(r"\b(\d{1,2})\s*([ap])\.?\s?m\.?(?![a-z])", re.IGNORECASE)
_BARE_HOUR = re.compile(r"\b(at|um|by|gegen|ab)\s+(\d{1,2})(?![\d:.,])(?!\s*(?:[ap]\.?m|uhr))", re.IGNORECASE)
# ctparse matches its words fuzzily ("money" reads as Monday, "ey" as the end of the year): a rule that stands for a
# named day or month counts only when the text really names one.
_NAMED_DAY = re.compile(
    r"\b(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|"
    r"\b(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag)s?\b",
    re.IGNORECASE,
)
_NAMED_MONTH = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|januar|februar|märz|mai|juni|juli|oktober|dez|"
    r"january|february|march|april|june|july|august|september|october|november|december|dezember)\b",
    re.IGNORECASE,
)
_END_OF = re.compile(r"\bend of\b|\bende\b|\beo[my]\b|\bjahresende\b|\bmonatsende\b", re.IGNORECASE)
_RULE_WORDS = {
    "ruleNamedDOW": _NAMED_DAY,
    "ruleLatentDOW": _NAMED_DAY,
    "ruleNamedMonth": _NAMED_MONTH,
    "ruleEOY": _END_OF,
    "ruleEOM": _END_OF,
}
# Phrasings ctparse misreads ("last night" as tonight, "this morning" as tomorrow's) or does not know (chat spellings),
# rewritten to ones it reads right before it parses.
_REWRITES = tuple(
    (re.compile(pattern, re.IGNORECASE), replacement)
    for pattern, replacement in (
        (r"\btonite\b", "tonight"),
        (r"\bnite\b", "night"),
        (r"\b(?:tmrw|tmr|tmrrw|tomoz|2moro|2morrow)\b", "tomorrow"),
        (r"\b(?:yday|ystd|yest)\b", "yesterday"),
        (r"\blast (?:night|evening)\b", "yesterday night"),
        (r"\bthis morning\b", "today morning"),
        (r"\bthe day before yesterday\b", "2 days ago"),
        (r"\bvorgestern\b", "vor 2 tagen"),
        (r"\blast week\b", "7 days ago"),
        (r"\bletzte woche\b", "vor 7 tagen"),
        # A moment said not to be the one ("yesterday, not today"): ctparse would join both into one.
        (r"\b(?:not|nicht)\s+(?:on\s+|at\s+|am\s+|um\s+)?[\w:.]+", " "),
    )
)
# Rules that fix the day from words ctparse matches exactly (today, tomorrow, dates written in digits).
_DAY_RULES = frozenset({
    "ruleToday", "ruleTomorrow", "ruleAfterTomorrow", "ruleYesterday", "ruleBeforeYesterday", "ruleDDMM", "ruleMMDD",
    "ruleDDMMYYYY", "ruleYYYYMMDD", "ruleDOMMonth", "ruleDOMMonth2", "ruleMonthDOM",
})  # fmt: skip
_PART_OF_DAY = {"morning": 8, "forenoon": 10, "noon": 12, "afternoon": 15, "evening": 19, "night": 21}
_CLOCK_WRITTEN = re.compile(r"\d:\d\d|\d\s*[ap]m\b|\buhr\b", re.IGNORECASE)
_CLOCK_ONLY_RULES = frozenset({"ruleHHMM", "ruleHHMMmilitary", "ruleAbsorbOnTime"})
_ZH_RELATIVE_CLOCK = re.compile(r"(小时|钟头|分钟)(之)?后")
# Durations: a number (or "half") and a unit, for snoozing.
_UNITS = {
    "minute": 1, "min": 1, "mins": 1, "minuten": 1, "分钟": 1, "分": 1,
    "hour": 60, "hr": 60, "hrs": 60, "h": 60, "stunde": 60, "stunden": 60, "小时": 60, "个小时": 60, "钟头": 60,
    "day": 1440, "tag": 1440, "tage": 1440, "天": 1440,
}  # fmt: skip
_DURATION = re.compile(
    r"(?P<n>\d+(?:[.,]5)?|an?|one|half an?|eine?|einer halben|半|一|两|三|四|五|十|十五|二十|三十|四十五)\s*"
    r"(?P<unit>minutes?|mins?|minuten|hours?|hrs?|h\b|stunden?|days?|tage?|分钟|个小时|小时|钟头|天)",
    re.IGNORECASE,
)
_WORD_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "ein": 1, "eine": 1, "einer": 1, "half a": 0.5, "half an": 0.5, "einer halben": 0.5,
    "半": 0.5, "一": 1, "两": 2, "三": 3, "四": 4, "五": 5, "十": 10, "十五": 15, "二十": 20, "三十": 30, "四十五": 45,
}  # fmt: skip


@dataclass(frozen=True)
class Found:
    """One moment as parsed, before it gets its key."""

    at: datetime  # naive wall time
    has_time: bool
    text: str


def find_moments(text: str, now: datetime, tz: ZoneInfo) -> list[Found]:
    """The moments `text` names, on the wall clock of `tz`; `now` is aware."""
    local_now = now.astimezone(tz)
    return _chinese(text, local_now) if CJK.search(text) else _english_german(text, local_now)


def find_minutes(text: str) -> list[int]:
    """Durations in minutes ("snooze 30 minutes", "半小时", "2 Stunden")."""
    found = []
    for match in _DURATION.finditer(text):
        raw = match.group("n").lower()
        count = _WORD_NUMBERS.get(raw)
        if count is None:
            count = float(raw.replace(",", "."))
        unit = match.group("unit").lower()
        factor = next((v for k, v in _UNITS.items() if unit == k or unit.rstrip("s") == k or unit.rstrip("n") == k), 1)
        minutes = int(count * factor)
        if minutes > 0:
            found.append(minutes)
    if re.search(r"半小时|half an hour|halbe stunde", text, re.IGNORECASE) and 30 not in found:
        found.append(30)
    return found


def after(now: datetime, delta: timedelta) -> datetime:
    """The wall time `delta` of real time after aware `now`: through UTC, since adding to an aware datetime adds to
    its wall clock and is an hour off across a daylight-saving change."""
    return (now.astimezone(UTC) + delta).astimezone(now.tzinfo).replace(tzinfo=None)


def _english_german(text: str, now: datetime) -> list[Found]:
    wall = now.replace(tzinfo=None)
    lowered = text.lower()
    if _WEEKEND.search(lowered):  # the coming Saturday, today when it is the weekend already
        days = (5 - wall.weekday()) % 7 if wall.weekday() < 5 else 0
        return [
            Found((wall + timedelta(days=days)).replace(hour=9, minute=0, second=0, microsecond=0), False, "weekend")
        ]
    for pattern, clock in _NOON:
        lowered = pattern.sub(clock, lowered)
    for pattern, replacement in _REWRITES:
        lowered = pattern.sub(replacement, lowered)
    lowered = _ONE.sub(lambda m: f"in 1 {m.group(1)}", lowered)
    lowered = _AM_PM.sub(lambda m: f"{m.group(1)}:00{m.group(2)}m", lowered)
    bare_hour = _BARE_HOUR.search(lowered) is not None
    lowered = _BARE_HOUR.sub(lambda m: f"{m.group(1)} {m.group(2)}:00", lowered)
    parsed = _ctparse(lowered, wall)
    if parsed is None:
        return []
    resolution, rules = parsed
    written = lowered[resolution.mstart : resolution.mend].strip() or str(resolution)
    if isinstance(resolution, Duration):
        return _duration(resolution, lowered, now, written)
    if isinstance(resolution, Interval):
        resolution = resolution.t_from or resolution.t_to
    if isinstance(resolution, Time) and resolution.hour is not None and not resolution.day:
        resolution = Time(
            year=wall.year, month=wall.month, day=wall.day, hour=resolution.hour, minute=resolution.minute
        )
    if not isinstance(resolution, Time) or not (resolution.year and resolution.month and resolution.day):
        return []  # a bare year or month is no moment worth grounding
    has_time = resolution.hour is not None
    part = _PART_OF_DAY.get(str(resolution.POD or "")) if not has_time else None
    hour = resolution.hour if resolution.hour is not None else (part if part is not None else 9)
    has_time = has_time or part is not None  # "Friday evening": 19:00
    at = datetime(resolution.year, resolution.month, resolution.day, hour, resolution.minute or 0)
    if _LAST.search(lowered) and at > wall:
        at -= timedelta(days=7)  # ctparse resolves "last Friday" forward
    if _TODAY.search(lowered):
        at = at.replace(year=wall.year, month=wall.month, day=wall.day)
    if has_time and bare_hour and 1 <= at.hour <= 6:
        at += timedelta(hours=12)  # "at 5" is the afternoon: families do not plan for 5 a.m. without saying so
    if has_time and rules <= _CLOCK_ONLY_RULES and not _TODAY.search(lowered):
        at = _next_on_the_clock(at, wall)
    return [Found(at, has_time, written)]


def _day_evidence(rules: frozenset[str], text: str) -> bool:
    """Whether the day comes from words read exactly: today/tomorrow…, a date in digits, a real day or month name."""
    named = ("ruleNamedDOW" in rules and _NAMED_DAY.search(text)) or (
        "ruleNamedMonth" in rules and _NAMED_MONTH.search(text)
    )
    return bool(rules & _DAY_RULES or named)


def _end_of_period(resolution: Any) -> bool:
    if not isinstance(resolution, Time) or not (resolution.month and resolution.day):
        return False
    day = datetime(resolution.year or 2000, resolution.month, resolution.day)
    return (day + timedelta(days=1)).day == 1


def _next_on_the_clock(at: datetime, wall: datetime) -> datetime:
    """A time of day without a day is the next time the clock shows it."""
    today = at.replace(year=wall.year, month=wall.month, day=wall.day)
    return today if today > wall else today + timedelta(days=1)


def _ctparse(text: str, wall: datetime) -> tuple[Any, frozenset[str]] | None:
    """ctparse's reading and the rules it used, unless it read a bare number as a date or a word that only looks
    like a day or month name ("salary" as Saturday, "money" as Monday) decided the date."""
    parsed = ctparse.ctparse(text, ts=wall, timeout=0.5)
    if parsed is None:
        return None
    rules = frozenset(part for part in parsed.production if isinstance(part, str))
    written = text[parsed.resolution.mstart : parsed.resolution.mend] or text  # no span: the whole text
    if rules <= _BARE_NUMBER_RULES and not _CLOCK_WRITTEN.search(written):
        return None  # "took 2 pills", "room 305"; but "till 3:00pm" is a time
    unverified = {rule for rule, words in _RULE_WORDS.items() if rule in rules and not words.search(text)}
    if not unverified:
        return parsed.resolution, rules
    resolution = parsed.resolution
    if _day_evidence(rules, text) or (isinstance(resolution, Time) and _end_of_period(resolution)):
        # Other words fixed the day ("heute um 18 Uhr, die …"): the look-alike did not decide it. A date at the end
        # of a year or month with no "end of" in the text is the look-alike's.
        return None if _end_of_period(resolution) else (resolution, rules - unverified)
    if "ruleHHMM" in rules and isinstance(resolution, Time) and resolution.hour is not None:
        return Time(hour=resolution.hour, minute=resolution.minute or 0), frozenset({"ruleHHMM"})  # the clock alone
    return None


def _duration(resolution: Duration, text: str, now: datetime, written: str) -> list[Found]:
    unit = resolution.unit.value
    if unit not in ("minutes", "hours", "days", "weeks"):
        return []
    delta = timedelta(**{unit: resolution.value})
    if _AGO.search(text):
        at = after(now, -delta)
    elif _DURATION_CUE.search(text):
        at = after(now, delta)
    else:
        return []  # "1,12 m" is no duration from now
    return [Found(at.replace(second=0, microsecond=0), unit in ("minutes", "hours"), written)]


def _chinese(text: str, now: datetime) -> list[Found]:
    wall = now.replace(tzinfo=None, second=0, microsecond=0)
    found = []
    for entity in _jionlp(text, wall):
        detail = entity["detail"]
        if detail["type"] not in ("time_point", "time_span"):
            continue
        moment = _chinese_point(detail["time"], wall, entity["text"])
        if moment is not None and _ZH_RELATIVE_CLOCK.search(entity["text"]):  # jionlp adds hours to the wall clock
            moment = Found(after(now, moment.at - wall), True, moment.text)
        if moment is not None:
            found.append(moment)
    return found


def jionlp_times(text: str, wall: datetime) -> list[dict[str, Any]]:
    """jionlp's time entities of `text` relative to the naive wall time `wall` (never a timestamp: jionlp would read
    it in the server's timezone)."""
    return _jionlp(text, wall)


def _jionlp(text: str, wall: datetime) -> list[dict[str, Any]]:
    logger = logging.getLogger()
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # jionlp logs tracebacks of parses it recovers from on the root logger
    try:
        return list(jionlp.ner.extract_time(text, time_base=wall, with_parsing=True))
    except Exception:  # noqa: BLE001 — a parser failure means "no moment found", never a failed message
        return []
    finally:
        logger.setLevel(level)


def _chinese_point(times: Any, wall: datetime, text: str) -> Found | None:
    if not isinstance(times, list) or "inf" in times or len(times) < 2:
        return None
    start, end = (datetime.fromisoformat(value) for value in times[:2])
    day_only = start.hour == 0 and start.minute == 0 and end - start >= timedelta(hours=23, minutes=59)
    if day_only:
        return Found(start.replace(hour=9), False, text)
    if start < wall and start.date() == wall.date() and not re.search("今|刚|前", text):
        start += timedelta(days=1)  # "晚上八点" when eight has passed today: tomorrow's
    return Found(start, True, text)
