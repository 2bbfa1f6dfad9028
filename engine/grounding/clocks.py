"""Times of day as English and German speakers write them: "3:30pm", "8am", "at 7", "um 8 Uhr", "17:00",
"half 5", "halb 6", "quarter past 4", "Viertel vor 8", "noon", "Mitternacht", and the parts of the day around them
("in the evening", "abends").

A number is a clock time only when its writing says so — minutes after a colon, am/pm, "Uhr", "o'clock", or a
preposition of time before it ("at 7", "um 8", "by 5") — so "400 a month", "room 305" or "zwölf Euro" are never
times.

Which half of the day a 12-hour time is in, when the text does not say: am/pm, a part of the day ("tonight",
"abends", "in the morning") decide first; otherwise an hour from 1 to 6 is the afternoon (families do not plan for
5 a.m. without saying so, and "half 5" is 17:30), from 7 to 11 the morning ("weekdays at 7" is 07:00) unless what
happens then is held in the evening ("Elternabend um 7", "dinner at 8"), 12 is noon.
A time written on the 24-hour clock (two digits, "05:30", or with "Uhr") is as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.grounding.language import language_of

_H = r"(?P<h>\d{1,2})"
_M = r"(?P<m>\d{2})"
_AMPM = r"(?P<ap>[ap])\.?\s?m\b\.?"
_AT = r"(?:at|um|by|gegen|ab|till|until|til|bis|around|from|von|before|vor|after|nach|for|für)"
# What may not follow a bare hour: a unit, an amount or an ordinal makes the number something else.
_NO_UNIT = (
    r"(?![\d:.,'%°]|\s*(?:[ap]\.?m\b|uhr|o'?clock|mins?\b|minutes?|hours?|"
    r"stunden?|minuten|days?|tagen?|weeks?|wochen|months?|monaten?|years?|jahren?|people|leute|personen|"
    r"euros?|eur\b|dollars?|pounds?|quid|bucks|[€$£¥]|%|st\b|nd\b|rd\b|th\b|\.\s*\w))"
)
# "to 4" is a time only where something is moved to it ("push it to 4", "verschieb das auf 4").
_MOVED = re.compile(r"\b(?:push\w*|mov\w*|shift\w*|resched\w*|postpon\w*|verschieb\w*|verleg\w*)\b")
# Each form with how it is read: "hm" hour and minutes, "half" British half past / German halb, and so on.
_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        ("hm", rf"(?<![\d.,:'])\b{_H}[:h]{_M}(?:\s*{_AMPM}|\s*(?P<uhr>uhr)\b)?(?![\d:]|[.,]\d)"),
        ("hm", rf"(?<![\d.,:'])\b{_H}\.{_M}\s*(?:{_AMPM}|(?P<uhr>uhr)\b)"),  # "7.30pm", "18.30 Uhr"
        ("hm", rf"\b{_AT}\s+{_H}\.{_M}(?![\d.,])"),  # "at 7.30"
        ("h", rf"(?<![\d.,:'])\b{_H}\s*{_AMPM}"),
        ("uhr", rf"(?<![\d.,:'])\b{_H}\s*uhr\b(?:\s*(?P<m>\d{{1,2}})\b)?"),
        ("h", rf"(?<![\d.,:'])\b{_H}\s*o'?\s?clock\b"),
        ("quarter_past", rf"\bquarter\s+(?:past|after)\s+{_H}\b(?!\s*[:.]\d)"),
        ("quarter_to", rf"\bquarter\s+(?:to|before|til)\s+{_H}\b(?!\s*[:.]\d)"),
        ("half_past", rf"\bhalf\s+past\s+{_H}\b(?!\s*[:.]\d)"),
        ("half_past", rf"\bhalf\s+{_H}\b(?!\s*[:.,]\d|\s*(?:hours?|h\b|an? |days?|weeks?|months?))"),
        ("viertel_nach", rf"\bviertel\s+nach\s+{_H}\b"),
        ("viertel_vor", rf"\b(?:viertel\s+vor|dreiviertel)\s+{_H}\b"),
        ("halb", rf"\bhalb\s+{_H}\b(?!\s*[:.,]\d)"),
        # a span of hours is its start: "between 8 and 10", "zwischen 8 und 10", "2 till 5", "von 3 bis 6"
        ("h", rf"\b(?:between|zwischen)\s+{_H}\s*(?:and|und|-|–)\s*\d{{1,2}}\b{_NO_UNIT}"),
        ("h", rf"(?<![\d.,:'])\b{_H}\s*(?:till|til|until|bis)\s*\d{{1,2}}\b{_NO_UNIT}"),
        ("h", rf"\b{_AT}\s+(?:(?:like|about|around|approx\.?|ca\.?|so|etwa)\s+)?(?:the\s+)?{_H}\b{_NO_UNIT}"),
        ("moved_to", rf"\b(?:to|auf)\s+{_H}\b{_NO_UNIT}"),  # "push the plumber thing to 4"
        # a bare hour right after the part of the day it is in: "sunday morning 9", "freitag abends 7"
        ("h", rf"\b(?:morning|afternoon|evening|morgens|vormittags|nachmittags|abends)\s+{_H}\b{_NO_UNIT}"
              r"(?!\s+[^\W\d_]+s\b)"),  # not a count: "evening 2 kids sleep over"
        ("noon", r"\b(?:noon|midday|mittags?|12 mittags)\b"),
        ("midnight", r"\b(?:midnight|mitternacht)\b"),
    )
)  # fmt: skip
_NIGHT = 20
# What is held in the evening puts a bare hour after noon without naming the part of the day: "elternabend um 7",
# "spieleabend", "dinner at 8", "abendessen um 7".
_EVENING_THINGS = re.compile(r"\b(?:\w+abend|abendessen|abendbrot|dinner|supper)\b", re.IGNORECASE)
# A German weekday a part of the day is written onto: "donnerstagabends", "mittwochnachmittags".
_DAY_OF = r"(?:(?:mon|diens|donners|frei|sams|sonn)tag|mittwoch|sonnabend)?"
# Parts of the day: their default hour when no clock time is given, and which half of the day they put a clock in.
PARTS_OF_DAY: tuple[tuple[re.Pattern[str], int, bool], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), hour, afternoon)
    for pattern, hour, afternoon in (
        (rf"\b(?:in the morning|this morning|mornings?|{_DAY_OF}(?:morgens|früh|frueh|vormittags?)|am morgen|"
         r"morgen früh)\b", 8, False),
        (rf"\b(?:at lunch(?:time)?|lunchtime|around lunch|midday|{_DAY_OF}mittags?|zu mittag|in der mittagspause)\b",
         12, True),
        (rf"\b(?:in the afternoon|this afternoon|afternoons?|{_DAY_OF}nachmittags?|am nachmittag)\b", 15, True),
        (rf"\b(?:in the evening|this evening|evenings?|{_DAY_OF}abends?|am abend|heute abend)\b", 19, True),
        (rf"\b(?:tonight|tonite|at night|nights?|{_DAY_OF}nachts|in der nacht)\b", _NIGHT, True),
    )
)  # fmt: skip


@dataclass(frozen=True)
class Clock:
    """A time of day the text names."""

    hour: int  # 0..23, the half of the day decided
    minute: int
    start: int  # where it is written in the text searched
    end: int
    text: str
    half_said: bool = True  # False: a 12-hour time whose half of the day the words leave open ("at 8", "um 8")


def find_clocks(text: str) -> list[Clock]:
    """The times of day `text` names, in order; overlapping readings keep the first form that matched."""
    found: list[Clock] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _FORMS:
        for match in pattern.finditer(text):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            clock = _read(kind, match, text)
            if clock is not None:
                found.append(clock)
                taken.append((match.start(), match.end()))
    return sorted(found, key=lambda c: c.start)


def part_of_day(text: str) -> tuple[int, bool] | None:
    """(default hour, whether it is the afternoon) of the part of the day `text` names, if any."""
    for pattern, hour, afternoon in PARTS_OF_DAY:
        if pattern.search(text):
            return hour, afternoon
    return None


def _read(kind: str, match: re.Match[str], text: str) -> Clock | None:
    if kind == "noon":
        return _clock(12, 0, match)
    if kind == "midnight":
        return _clock(0, 0, match)
    if kind == "moved_to" and not _MOVED.search(text[: match.start()].lower()):
        return None  # "from 3 to 4 people", "count to 10"
    hour = int(match.group("h"))
    groups = match.groupdict()
    minute = int(groups["m"]) if groups.get("m") else 0
    if kind == "quarter_past" or kind == "viertel_nach":
        minute = 15
    elif kind == "half_past":
        minute = 30
    elif kind in ("quarter_to", "viertel_vor"):
        hour, minute = (hour - 1) or 12, 45  # "quarter to 1" is 12:45
    elif kind == "halb":  # German "halb 6" is half past five, "halb 1" half past twelve
        hour, minute = (hour - 1) or 12, 30
    if not (0 <= hour <= 24 and 0 <= minute < 60) or (hour == 24 and minute):
        return None
    written = match.group(0)
    ap = (groups.get("ap") or "").lower()
    if ap:
        if not 1 <= hour <= 12:
            return None
        return _clock(hour % 12 + (12 if ap == "p" else 0), minute, match)
    twenty_four = hour == 0 or hour > 12 or groups.get("uhr") or kind == "uhr" or re.match(r"0\d", written.lstrip())
    if hour == 24:
        hour = 0
    if twenty_four and not (kind == "uhr" and hour <= 12 and _afternoon_around(text, match)):
        return _clock(hour, minute, match)
    if groups.get("m") and not _part_around(text, match) and language_of(text) != "en":
        return _clock(hour, minute, match)  # German and Chinese write the day's hours: "um 6:45" is the morning's
    said = _part_around(text, match) is not None
    if kind in ("quarter_to", "viertel_vor", "halb"):  # the half of the day of the hour said: "quarter to 7" is 06:45
        return _clock((_half_of_day(hour % 12 + 1, text, match) - 1) % 24, minute, match, half_said=said)
    return _clock(_half_of_day(hour, text, match), minute, match, half_said=said)


def _half_of_day(hour: int, text: str, match: re.Match[str]) -> int:
    """The 24-hour hour of a 12-hour `hour` (1..12) whose half of the day the text may not say."""
    around = text[max(0, match.start() - 24) : match.end() + 30]
    part = part_of_day(around)
    if part is not None:
        return in_part(hour, part)
    if hour == 12:
        return 12
    if 1 <= hour <= 6 or (hour <= 11 and _EVENING_THINGS.search(text[max(0, match.start() - 48) : match.end() + 30])):
        return hour + 12
    return hour


def in_part(hour: int, part: tuple[int, bool]) -> int:
    """The 24-hour hour of a 12-hour `hour` in the part of the day `part` (`part_of_day`): 9 in the evening is 21,
    7 in the morning 7, "2 at night" 02:00."""
    hour = hour % 12 or 12
    default, afternoon = part
    if afternoon and not (default == _NIGHT and hour in (12, 1, 2, 3, 4)):
        return hour % 12 + 12
    return hour % 12


def _part_around(text: str, match: re.Match[str]) -> tuple[int, bool] | None:
    return part_of_day(text[max(0, match.start() - 24) : match.end() + 30])


def _afternoon_around(text: str, match: re.Match[str]) -> bool:
    part = _part_around(text, match)
    return part is not None and part[1]


def _clock(hour: int, minute: int, match: re.Match[str], *, half_said: bool = True) -> Clock:
    return Clock(hour, minute, match.start(), match.end(), match.group(0).strip(), half_said)
