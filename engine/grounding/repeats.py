"""Repetitions a message names ("every Monday at 7:30", "the 1st of every month", "jeden Montag um 7:30",
"每周三晚上八点") as RFC 5545 rules with their first occurrence on the member's wall clock.

A frequency cue (one table per language) says that it repeats and how often; the date parsers find the anchor —
the weekday, day of month and time — in the rest of the sentence; python-dateutil gives the first occurrence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr

from engine.grounding.moments import CJK, WEEKDAY_WORD, WEEKDAYS, Found, find_moments, jionlp_times

_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_EVERY = r"(?:every|each|jeden|jede|jedes|alle)"
# (cue, FREQ, BYDAY): the first cue that matches decides; the interval comes from "every other" / "alle 2 Wochen".
_CUES: tuple[tuple[re.Pattern[str], str, str | None], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), freq, byday)
    for pattern, freq, byday in (
        (r"\b(?:every|each) ?weekdays?\b|\bon weekdays\b|\bwerktags\b|\bjeden werktag\b|\ban werktagen\b",
         "WEEKLY", "MO,TU,WE,TH,FR"),
        (r"\b(?:every|each) (?:other )?day\b|\bdaily\b|\bevery morning\b|\bevery evening\b|\bevery night\b"
         r"|\bjeden (?:tag|morgen|abend)\b|\btäglich\b", "DAILY", None),
        (r"\b(?:every|each) (?:other |\d+ )?weeks?\b|\bweekly\b|\bjede woche\b|\balle \d+ wochen\b|\bwöchentlich\b",
         "WEEKLY", None),
        (rf"\b(?:every|each) (?:other )?(?:{'|'.join(WEEKDAYS)})|\bjeden (?:{'|'.join(WEEKDAYS)})\b"
         rf"|\b(?:{'|'.join(w for w in WEEKDAYS if w.isascii())})s\b", "WEEKLY", None),
        (r"\b(?:every|each) (?:other )?month\b|\bof (?:every|each|the) month\b|\bmonthly\b|\bjeden monat\b"
         r"|\bdes monats\b|\bjedes monats\b|\bmonatlich\b", "MONTHLY", None),
        (r"\b(?:every|each) year\b|\byearly\b|\bannually\b|\bjedes jahr\b|\bjährlich\b", "YEARLY", None),
    )
)  # fmt: skip
_INTERVALS = (
    (re.compile(r"\bevery other\b|\bjede zweite\b|\bjeden zweiten\b|隔周", re.IGNORECASE), 2),
    (re.compile(r"\b(?:every|alle)\s+(\d+)\s+(?:weeks|wochen|days|tage|months|monate)\b", re.IGNORECASE), None),
)
_MONTH_DAY = re.compile(
    r"\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th|\.)?\s+(?:of\s+)?(?:every|each|the|des|jeden)\s+mon", re.I
)
_ZH_MONTH_DAY = re.compile(r"每(?:个)?月(\d{1,2}|[一二三四五六七八九十]{1,3})[号日]")
_ZH_WEEKDAYS = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")
_ZH_DAY_INDEX = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_WORKDAYS = re.compile(r"工作日|周一到周五")
_ZH_EVERY = re.compile(r"每|隔周")
_CN_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}


@dataclass(frozen=True)
class FoundRepeat:
    rrule: str
    first: datetime  # naive wall time of the first occurrence from now
    text: str


def find_repeat(text: str, now: datetime, tz: ZoneInfo) -> FoundRepeat | None:
    """The repetition `text` names, if any; `now` is aware."""
    local_now = now.astimezone(tz)
    return _chinese(text, local_now, tz) if CJK.search(text) else _english_german(text, local_now, tz)


def _english_german(text: str, now: datetime, tz: ZoneInfo) -> FoundRepeat | None:
    lowered = text.lower()
    found = next(((p, f, b, c) for p, f, b in _CUES if (c := p.search(lowered)) is not None), None)
    if found is None:
        return None
    pattern, freq, byday, cue = found
    interval = _interval(lowered)
    days = sorted({WEEKDAYS[word.lower()] for word in WEEKDAY_WORD.findall(lowered)}, key=_DAYS.index)
    if days and freq == "WEEKLY" and byday is None:
        byday = ",".join(days)
    month_day = _MONTH_DAY.search(lowered)
    rest = re.sub(rf"\b{_EVERY}\b", " ", pattern.sub(" ", lowered))
    if month_day is not None:
        rest = rest.replace(month_day.group(0), " ")
    anchors = find_moments(WEEKDAY_WORD.sub(" ", rest) if byday else rest, now, tz)
    anchor = anchors[0] if anchors else None
    return _rule(freq, interval, byday, int(month_day.group(1)) if month_day else None, anchor, now, cue.group(0))


def _chinese(text: str, now: datetime, tz: ZoneInfo) -> FoundRepeat | None:
    if not _ZH_EVERY.search(text) and not _ZH_WORKDAYS.search(text):
        return None
    wall = now.replace(tzinfo=None, second=0, microsecond=0)
    timed = [m for m in find_moments(_ZH_WEEKDAYS.sub(" ", text), now, tz) if m.has_time]
    anchor = timed[0] if timed else _period_point(text, wall)
    if _ZH_WORKDAYS.search(text):
        return _rule("WEEKLY", 1, "MO,TU,WE,TH,FR", None, anchor, now, "工作日")
    month_day = _ZH_MONTH_DAY.search(text)
    if month_day is not None:
        raw = month_day.group(1)
        day = int(raw) if raw.isdigit() else _chinese_number(raw)
        return _rule("MONTHLY", 1, None, day, anchor, now, month_day.group(0))
    weekdays = [_ZH_DAY_INDEX[d] for d in _ZH_WEEKDAYS.findall(text)]
    interval = 2 if "隔周" in text else 1
    if weekdays and re.search(r"每(?:个)?(?:周|星期|礼拜)|隔周", text):
        byday = ",".join(_DAYS[i] for i in sorted(set(weekdays)))
        return _rule("WEEKLY", interval, byday, None, anchor, now, "每周")
    for freq, cue in (("DAILY", r"每天|每日|每晚|每早"), ("MONTHLY", r"每(?:个)?月"), ("YEARLY", r"每年")):
        if re.search(cue, text):
            return _rule(freq, 1, None, None, anchor, now, cue)
    for entity in jionlp_times(text, wall):  # jionlp reads the rest of the periodic phrases ("每隔三天")
        if entity["detail"]["type"] == "time_period":
            delta = entity["detail"]["time"].get("delta") or {}
            if list(delta) == ["day"]:
                days = int(float(delta["day"]))
                freq, count = ("WEEKLY", days // 7) if days % 7 == 0 else ("DAILY", days)
                return _rule(freq, count, None, None, anchor, now, entity["text"])
    return None


def _period_point(text: str, wall: datetime) -> Found | None:
    """The time of day of a periodic phrase as jionlp reads it ("每天早上七点" → 07:00)."""
    for entity in jionlp_times(text, wall):
        point = ((entity["detail"].get("time") or {}) if entity["detail"]["type"] == "time_period" else {}).get("point")
        times = (point or {}).get("time")
        if isinstance(times, list) and times and times[0] != "inf":
            start = datetime.fromisoformat(times[0])
            if (start.hour, start.minute) != (0, 0):
                return Found(start, True, entity["text"])
    return None


def _interval(text: str) -> int:
    for pattern, fixed in _INTERVALS:
        match = pattern.search(text)
        if match is not None:
            return fixed if fixed is not None else max(1, int(match.group(1)))
    return 1


def _chinese_number(text: str) -> int:
    if text.startswith("十"):
        return 10 + _CN_DIGITS.get(text[1:], 0) if len(text) > 1 else 10
    if "十" in text:
        tens, _, ones = text.partition("十")
        return _CN_DIGITS[tens] * 10 + _CN_DIGITS.get(ones, 0)
    return _CN_DIGITS.get(text, 1)


def _rule(
    freq: str, interval: int, byday: str | None, month_day: int | None, anchor: Found | None, now: datetime, text: str
) -> FoundRepeat | None:
    """The rule with its parts taken from the anchor, and its first occurrence at or after now. Without a time of
    day, a reminder repeats at 09:00."""
    wall = now.replace(tzinfo=None, second=0, microsecond=0)
    parts = [f"FREQ={freq}"] + ([f"INTERVAL={interval}"] if interval > 1 else [])
    if byday:
        parts.append(f"BYDAY={byday}")
    elif freq == "WEEKLY" and anchor is not None and not anchor.has_time:
        parts.append(f"BYDAY={_DAYS[anchor.at.weekday()]}")
    if freq == "MONTHLY":
        day = month_day or (anchor.at.day if anchor is not None else None)
        if day is None or not 1 <= day <= 31:
            return None
        parts.append(f"BYMONTHDAY={day}")
    if freq == "YEARLY" and anchor is not None:
        parts += [f"BYMONTH={anchor.at.month}", f"BYMONTHDAY={anchor.at.day}"]
    rule = ";".join(parts)  # the time of day is the first occurrence's: the reminder keeps it
    hour, minute = (anchor.at.hour, anchor.at.minute) if anchor is not None and anchor.has_time else (9, 0)
    start = wall.replace(hour=hour, minute=minute)
    if anchor is not None and anchor.at.date() > start.date() and interval > 1:
        start = anchor.at.replace(hour=hour, minute=minute)  # "every 2 weeks from Friday": the series starts there
    occurrences = rrulestr(rule, dtstart=start - timedelta(days=1) if interval == 1 else start)
    first = next((d for _, d in zip(range(800), occurrences, strict=False) if d > wall), None)
    return None if first is None else FoundRepeat(rule, first, text)
