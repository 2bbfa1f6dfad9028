"""Repetitions a message names ("every other Tuesday at 6:30pm", "the first Monday of every month", "weekdays at
7", "jeden zweiten Dienstag", "每个月第一个周一", "工作日早上七点") as RFC 5545 rules with their first occurrence on
the member's wall clock.

A frequency cue says that it repeats and how often, the weekday and month-day words which days, the clock grammar
(`clocks.py`, jionlp for Chinese) the time of day; python-dateutil gives the first occurrence. Without a time of
day, a repetition is at its part of the day ("every evening": 19:00) or at 09:00.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr

from engine.grounding.clocks import find_clocks, in_part, part_of_day
from engine.grounding.days import WEEKDAY_NAMES
from engine.grounding.language import CJK, language_of
from engine.grounding.moments import find_moments, jionlp_times
from engine.grounding.spelling import normalised

_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_WORKDAYS = "MO,TU,WE,TH,FR"
_FULL_DAYS = {name: index for name, index in WEEKDAY_NAMES.items() if len(name) > 4 or name in ("tues", "thurs")}
_DAY = "|".join(sorted(_FULL_DAYS, key=len, reverse=True))
_EN_DAY = "|".join(n for n in _FULL_DAYS if n.isascii() and n.endswith("day"))
_DE_DAY = "|".join(n for n in _FULL_DAYS if n.endswith(("tag", "woch")) or n == "sonnabend")
_DAY_PART = "morgens|vormittags|mittags|nachmittags|abends|nachts"
# A weekday given up for another: "thursdays now, not wednesdays", "donnerstags statt mittwochs".
_REPLACED = re.compile(
    rf"\b(?:instead of|rather than|not|no longer|statt|anstatt|nicht mehr)\s+(?:on\s+|am\s+)?(?:{_DAY})s?\b",
    re.IGNORECASE,
)
# A weekday said as a habit — "wednesdays", "on friday evenings", "mittwochs", "donnerstagabends" — repeats weekly.
_EVERY = r"(?:every|each|jeden|jede|jedes|jeder|alle)"
_OTHER = r"(?:other|second|2nd|zweiten|zweite|2\.)"
_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": -1,
    "ersten": 1, "erste": 1, "erster": 1, "1.": 1, "zweiten": 2, "zweite": 2, "2.": 2, "dritten": 3, "dritte": 3,
    "3.": 3, "vierten": 4, "vierte": 4, "4.": 4, "letzten": -1, "letzte": -1, "letzter": -1,
}  # fmt: skip
_ORDINAL = "|".join(re.escape(o) for o in sorted(_ORDINALS, key=len, reverse=True))
# A day of the month said as a word: "the first of every month", "jeden ersten im Monat".
_DAY_ORDINAL = "|".join(o for o in sorted(_ORDINALS, key=len, reverse=True) if o.isalpha() and _ORDINALS[o] > 0)
_MONTHLY = r"(?:(?:of|in)\s+(?:every|each|the|a)\s+month|every\s+month|a\s+month|monthly|im\s+monat|des\s+monats|" \
    r"jedes\s+monats|jeden\s+monats?|pro\s+monat|monatlich)"  # fmt: skip
# (cue, FREQ, BYDAY) in the order they are tried; the first that matches decides.
_CUES: tuple[tuple[str, re.Pattern[str], str, str | None], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE), freq, byday)
    for name, pattern, freq, byday in (
        ("nth_weekday", rf"\b(?:(?:on|am)\s+)?(?:the\s+|{_EVERY}\s+)?(?P<nth>{_ORDINAL})\s+(?P<day>{_DAY})s?\s+"
                        rf"{_MONTHLY}", "MONTHLY", None),
        ("month_day", rf"(?<![\d.,])\b(?:the\s+|am\s+|jeden\s+)?(?P<md>\d{{1,2}}|{_DAY_ORDINAL})(?:st|nd|rd|th|\.)?\s+"
                      rf"{_MONTHLY}|"
                      rf"\b(?:every|each)\s+month\s+on\s+the\s+(?P<md2>\d{{1,2}})(?:st|nd|rd|th)?\b", "MONTHLY", None),
        ("workdays", r"\b(?:every|each|on)\s+weekdays?\b|\bweekdays\b|\bwerktags\b|\b(?:jeden|an)\s+werktag(?:en)?\b|"
                     r"\b(?:monday|mon)\s*(?:to|-|–|through|thru)\s*(?:friday|fri)\b|"
                     r"\b(?:montags?|mo)\s*(?:bis|-|–)\s*(?:freitags?|fr)\b", "WEEKLY", _WORKDAYS),
        ("days", rf"\b{_EVERY}\s+(?:{_OTHER}\s+|\d+(?:st|nd|rd|th|\.)?\s+)?(?:{_DAY})\b|"
                 rf"\b(?:on\s+)?(?:{_EN_DAY})(?:s|\s+(?:mornings|afternoons|evenings|nights))\b|"
                 rf"\b(?:{_DE_DAY})(?:s|\s*(?:{_DAY_PART}))\b",
         "WEEKLY", None),
        ("daily", rf"\b{_EVERY}\s+(?:{_OTHER}\s+|\d+\s+)?(?:day|days|tag|tage|morning|evening|night|abend|morgen)\b|"
                  r"\bdaily\b|\btäglich\b|\bjeden\s+tag\b", "DAILY", None),
        ("weekly", rf"\b{_EVERY}\s+(?:{_OTHER}\s+|\d+\s+)?(?:week|weeks|woche|wochen|fortnight)\b|\bweekly\b|"
                   r"\bfortnightly\b|\bbiweekly\b|\bwöchentlich\b|\bzweiwöchentlich\b", "WEEKLY", None),
        ("monthly", rf"\b{_EVERY}\s+(?:{_OTHER}\s+|\d+\s+)?(?:month|months|monat|monate)\b|\bmonthly\b|\bmonatlich\b",
         "MONTHLY", None),
        ("yearly", rf"\b{_EVERY}\s+year\b|\byearly\b|\bannually\b|\bjedes\s+jahr\b|\bjährlich\b", "YEARLY", None),
    )
)  # fmt: skip
_INTERVAL = re.compile(
    rf"\b{_EVERY}\s+{_OTHER}(?!\w)|\bfortnight(?:ly)?\b|\bbiweekly\b|\bzweiwöchentlich\b|"
    r"\b(?:every|alle)\s+(?P<n>\d+)(?:st|nd|rd|th|\.)?\s+(?:days?|weeks?|months?|tage|wochen|monate|\w+day|\w+tag)\b",
    re.IGNORECASE,
)
_ZH_DAY_INDEX = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_WEEKDAYS = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")
# A weekday given up for another: "不是周三了", "而不是每周三".
_ZH_REPLACED = re.compile(r"(?:不是|而不是|不再是?)(?:每个?)?(?:周|星期|礼拜)[一二三四五六日天]")
_ZH_NTH = re.compile(r"每(?:个)?月(?:的)?(第[一二三四1-4]|最后一)个?(?:周|星期|礼拜)([一二三四五六日天])")
_ZH_MONTH_DAY = re.compile(r"每(?:个)?月(?:的)?(\d{1,2}|[一二三四五六七八九十]{1,3})[号日]")
_ZH_WORKDAYS = re.compile(r"工作日|周一到周五|星期一到星期五")
_ZH_EVERY = re.compile(r"每|隔周")
_ZH_FORTNIGHT = re.compile(r"隔周|每两周|每隔一周|双周")
_CN_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}


@dataclass(frozen=True)
class FoundRepeat:
    rrule: str
    first: datetime  # naive wall time of the first occurrence from now
    text: str
    has_time: bool = True  # False: the words name no time of day, and `first` is at 09:00


@dataclass(frozen=True)
class _Anchor:
    """What the rest of the message says about when: a day (for a rule's weekday or month day) and a time."""

    day: datetime | None
    hour: int
    minute: int
    has_time: bool


def find_repeat(text: str, now: datetime, tz: ZoneInfo) -> FoundRepeat | None:
    """The repetition `text` names, if any; `now` is aware."""
    local_now = now.astimezone(tz)
    return _chinese(text, local_now, tz) if CJK.search(text) else _english_german(text, local_now, tz)


def _english_german(text: str, now: datetime, tz: ZoneInfo) -> FoundRepeat | None:
    normal = normalised(text, language_of(text))
    found = next(((n, p, f, b, c) for n, p, f, b in _CUES if (c := p.search(normal)) is not None), None)
    if found is None:
        return None
    name, _, freq, byday, cue = found
    interval = _interval(normal)
    rest = normal.replace(cue.group(0), " ")
    month_day = nth = None
    if name == "nth_weekday":
        nth = f"{_ORDINALS[cue.group('nth').lower()]}{_DAYS[_FULL_DAYS[cue.group('day').lower()]]}"
    elif name == "month_day":
        raw = cue.group("md") or cue.group("md2")
        month_day = int(raw) if raw.isdigit() else _ORDINALS[raw.lower()]
    elif name in ("days", "weekly") and byday is None:
        said = _REPLACED.sub(" ", normal)  # "thursdays now, not wednesdays": the day given up is none of the rule's
        days = sorted({_FULL_DAYS[w.lower()] for w in re.findall(rf"\b({_DAY})(?=s?\b|{_DAY_PART})", said)})
        byday = ",".join(_DAYS[d] for d in days) or None
    anchor = _anchor(rest, part_of_day(normal), now, tz)
    return _rule(freq, interval, byday, month_day, nth, anchor, now, cue.group(0).strip())


def _anchor(rest: str, part: tuple[int, bool] | None, now: datetime, tz: ZoneInfo) -> _Anchor:
    """The time of day the rest of the message names (its first clock, else the part of the day `part` the message
    names, else 09:00), and
    the day it names when that is not a weekday (the rule's own words say those)."""
    clocks = find_clocks(rest)
    days = [m for m in find_moments(re.sub(rf"\b(?:{_DAY})s?\b", " ", rest), now, tz) if m.at.date() != now.date()]
    day = days[0].at if days else None
    if clocks:  # "every night at 9": the part of the day the rule's own words name says the half of an open hour
        clock = clocks[0]
        hour = in_part(clock.hour, part) if part is not None and not clock.half_said else clock.hour
        return _Anchor(day, hour, clock.minute, True)
    if part is not None:
        return _Anchor(day, part[0], 0, True)
    return _Anchor(day, 9, 0, False)


def _chinese(text: str, now: datetime, tz: ZoneInfo) -> FoundRepeat | None:
    if not _ZH_EVERY.search(text) and not _ZH_WORKDAYS.search(text):
        return None
    wall = now.replace(tzinfo=None, second=0, microsecond=0)
    anchor = _chinese_anchor(text, now, tz, wall)
    interval = 2 if _ZH_FORTNIGHT.search(text) else 1
    if _ZH_WORKDAYS.search(text):
        return _rule("WEEKLY", 1, _WORKDAYS, None, None, anchor, now, "工作日")
    nth = _ZH_NTH.search(text)
    if nth is not None:
        raw = nth.group(1)
        index = -1 if raw.startswith("最后") else _chinese_number(raw.removeprefix("第"))
        byday = f"{index}{_DAYS[_ZH_DAY_INDEX[nth.group(2)]]}"
        return _rule("MONTHLY", 1, None, None, byday, anchor, now, nth.group(0))
    month_day = _ZH_MONTH_DAY.search(text)
    if month_day is not None:
        raw = month_day.group(1)
        day = int(raw) if raw.isdigit() else _chinese_number(raw)
        return _rule("MONTHLY", 1, None, day, None, anchor, now, month_day.group(0))
    weekdays = sorted({_ZH_DAY_INDEX[d] for d in _ZH_WEEKDAYS.findall(_ZH_REPLACED.sub(" ", text))})
    if weekdays and re.search(r"每(?:个)?(?:周|星期|礼拜)|每两周|每隔一周|隔周|双周", text):
        byday = ",".join(_DAYS[i] for i in weekdays)
        return _rule("WEEKLY", interval, byday, None, None, anchor, now, "每周")
    for freq, cue in (("DAILY", r"每天|每日|每晚|每早"), ("MONTHLY", r"每(?:个)?月"), ("YEARLY", r"每年")):
        if re.search(cue, text):
            return _rule(freq, 1, None, None, None, anchor, now, cue)
    for entity in jionlp_times(text, wall):  # jionlp reads the rest of the periodic phrases ("每隔三天")
        if entity["detail"]["type"] == "time_period":
            delta = entity["detail"]["time"].get("delta") or {}
            if list(delta) == ["day"]:
                days = int(float(delta["day"]))
                freq, count = ("WEEKLY", days // 7) if days % 7 == 0 else ("DAILY", days)
                return _rule(freq, count, None, None, None, anchor, now, entity["text"])
    return None


def _chinese_anchor(text: str, now: datetime, tz: ZoneInfo, wall: datetime) -> _Anchor:
    bare = _ZH_WEEKDAYS.sub(" ", re.sub(r"第[一二三四1-4]个?|最后一个?", " ", text))
    timed = [m for m in find_moments(bare, now, tz) if m.has_time]
    if timed:
        return _Anchor(None, timed[0].at.hour, timed[0].at.minute, True)
    for entity in jionlp_times(text, wall):  # the time of day of a periodic phrase ("每天早上七点" → 07:00)
        detail = entity["detail"]
        point = ((detail.get("time") or {}) if detail["type"] == "time_period" else {}).get("point")
        times = (point or {}).get("time")
        if isinstance(times, list) and times and times[0] != "inf":
            start = datetime.fromisoformat(times[0])
            if (start.hour, start.minute) != (0, 0):
                return _Anchor(None, start.hour, start.minute, True)
    return _Anchor(None, 9, 0, False)


def _interval(text: str) -> int:
    match = _INTERVAL.search(text)
    if match is None:
        return 1
    return max(1, min(int(match.group("n")), 366)) if match.group("n") else 2


def _chinese_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text.startswith("十"):
        return 10 + _CN_DIGITS.get(text[1:], 0) if len(text) > 1 else 10
    if "十" in text:
        tens, _, ones = text.partition("十")
        return _CN_DIGITS[tens] * 10 + _CN_DIGITS.get(ones, 0)
    return _CN_DIGITS.get(text, 1)


def _rule(
    freq: str,
    interval: int,
    byday: str | None,
    month_day: int | None,
    nth: str | None,
    anchor: _Anchor,
    now: datetime,
    text: str,
) -> FoundRepeat | None:
    """The rule with its parts taken from the words and the anchor, and its first occurrence after now."""
    wall = now.replace(tzinfo=None, second=0, microsecond=0)
    parts = [f"FREQ={freq}"] + ([f"INTERVAL={interval}"] if interval > 1 else [])
    if nth is not None:
        parts.append(f"BYDAY={nth}")
    elif byday:
        parts.append(f"BYDAY={byday}")
    elif freq == "WEEKLY" and anchor.day is not None:
        parts.append(f"BYDAY={_DAYS[anchor.day.weekday()]}")
    if freq == "MONTHLY" and nth is None:
        day = month_day or (anchor.day.day if anchor.day is not None else wall.day)
        if not 1 <= day <= 31:
            return None
        parts.append(f"BYMONTHDAY={day}")
    if freq == "YEARLY" and anchor.day is not None:
        parts += [f"BYMONTH={anchor.day.month}", f"BYMONTHDAY={anchor.day.day}"]
    rule = ";".join(parts)  # the time of day is the first occurrence's: the reminder keeps it
    start = wall.replace(hour=anchor.hour, minute=anchor.minute)
    if anchor.day is not None and anchor.day.date() > start.date() and interval > 1:
        start = anchor.day.replace(hour=anchor.hour, minute=anchor.minute)  # "every 2 weeks from Friday"
    occurrences = rrulestr(rule, dtstart=start - timedelta(days=1) if interval == 1 else start)
    first = next((d for _, d in zip(range(800), occurrences, strict=False) if d > wall), None)
    return None if first is None else FoundRepeat(rule, first, text, anchor.has_time)
