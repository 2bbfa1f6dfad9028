"""Days as English and German speakers name them, counted from the member's today: "tomorrow", "the day after
tomorrow", "übermorgen", "next Tuesday", "nächste Woche Mittwoch", "this Friday", "am Freitag", "Saturday week",
"in a fortnight", "in 3 days", "2 days ago", "end of the month", "Monatsende", "the weekend", "March 3rd", "3. März",
"am 3.12.", "on the 5th".

What the words mean, decided once:
- a bare weekday, "this", "coming", "on", "am", "diesen", "kommenden" + weekday: the coming one (today included);
  in a sentence about the past ("paid on Friday") the latest one, today included;
- "next" / "nächsten" + weekday, "nächste Woche Mittwoch": that day in next week (weeks start on Monday), so "next
  Tuesday" said on a Monday is eight days away and said on a Friday four;
- "last" / "letzten" + weekday: the latest one before today;
- "Saturday week", "Samstag in einer Woche", "a week on Saturday", "a week tomorrow": the day named, a week later;
- "end of the week" is its Friday, "end of the month" its last day, "the weekend" the coming Saturday (today when it
  is the weekend), "next weekend" next week's Saturday;
- a date without a year is the coming one, or in a sentence about the past the latest one.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

from dateutil.relativedelta import relativedelta

WEEKDAY_NAMES: dict[str, int] = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
    "montag": 0, "dienstag": 1, "mittwoch": 2, "donnerstag": 3, "freitag": 4, "samstag": 5, "sonnabend": 5,
    "sonntag": 6, "mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4,
    "mo": 0, "di": 1, "mi": 2, "do": 3, "fr": 4, "sa": 5, "so": 6, "sat": 5, "sun": 6,
}  # fmt: skip
# Abbreviations that are also words ("sat", "do", "so") count only after a word that introduces a day, or (but
# "so", "about") right before a clock time: "football sat 9am", "zahnarzt do 16:15".
_AMBIGUOUS = frozenset({"mo", "di", "mi", "do", "fr", "sa", "so", "sat", "sun", "mon", "wed"})
_TIMED = r"\s+(?:at\s+|um\s+)?\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|uhr)\b|\s+(?:at\s+|um\s+)?\d{1,2}:\d{2}\b"
MONTH_NAMES: dict[str, int] = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
    "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1, "feb": 2, "mar": 3, "apr": 4,
    "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12, "januar": 1, "jänner": 1,
    "februar": 2, "märz": 3, "maerz": 3, "mai": 5, "juni": 6, "juli": 7, "oktober": 10, "dezember": 12, "okt": 10,
    "dez": 12,
}  # fmt: skip
_WEEKDAY = "|".join(sorted(WEEKDAY_NAMES, key=len, reverse=True))
_MONTH = "|".join(sorted(MONTH_NAMES, key=len, reverse=True))
_FULL_WEEKDAY = "|".join(name for name in WEEKDAY_NAMES if len(name) > 5)
_NEXT = r"next|nächsten|nächster|nächste|naechsten"
_THIS = r"this|coming|diesen|dieser|diesem|kommenden|kommender"
_LAST = r"last|past|previous|letzten|letzter|letzte|vergangenen|vorigen|voriger"
_ON = r"on|am|by|until|till|bis|ab|from|vom|seit|since|für|for|before|vor"
_ORD = r"(?:st|nd|rd|th|\.)?"
_UNIT_DAYS = {"day": 1, "days": 1, "tag": 1, "tage": 1, "tagen": 1, "week": 7, "weeks": 7, "woche": 7, "wochen": 7}
_UNIT_MONTHS = {"month": 1, "months": 1, "monat": 1, "monate": 1, "monaten": 1}
_UNIT = "|".join(sorted([*_UNIT_DAYS, *_UNIT_MONTHS], key=len, reverse=True))
# What an ordinal counts when it is no day of the month: "on the 3rd shelf", "the 2nd floor", "the 4th time".
_COUNTED = (
    r"shelf|shelves|floor|storey|story|drawer|cupboard|box|row|door|room|house|street|road|exit|turning|turn|stop|"
    r"platform|gate|grade|class|year|place|step|page|chapter|level|round|attempt|try|go|time|half|one|child|kid|"
    r"tooth|bin|slot|locker|seat|bed|tab|button|item|line|block|lane|bay|pew|hole|lesson|week|month|day"
)
_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        ("iso", r"\b(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})\b"),
        ("dmy", r"(?<![\d.,])\b(?P<d>\d{1,2})\.(?P<mo>\d{1,2})\.(?P<y>\d{4}|\d{2}(?!\d))?(?![\d,])"),
        ("dm", rf"(?<![\d.,])\b(?P<d>\d{{1,2}}){_ORD}\s*(?:of\s+)?(?P<month>{_MONTH})\b\.?(?:,?\s+(?P<y>\d{{4}}))?"),
        ("md", rf"\b(?P<month>{_MONTH})\.?\s+(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?![:.]\d)"
               rf"(?:,?\s+(?P<y>\d{{4}}))?"),
        ("week_after", rf"\b(?P<day>{_FULL_WEEKDAY}|today|tomorrow|heute|morgen)\s+(?:in\s+(?:einer|1)\s+woche|week)\b|"
                       rf"\ba\s+week\s+(?:on\s+|from\s+)?(?P<day2>{_FULL_WEEKDAY}|today|tomorrow)\b"),
        ("after_tomorrow", r"\b(?:the\s+)?day\s+after\s+tomorrow\b|\bübermorgen\b|\bueber?morgen\b"),
        ("before_yesterday", r"\b(?:the\s+)?day\s+before\s+yesterday\b|\bvorgestern\b"),
        ("tomorrow", r"\btomorrow\b|(?<!\bam )(?<!\bguten )(?<!\bjeden )(?<!\bden )(?<!\bheute )(?<!\bgestern )"
                     r"(?<!\bdiesen )(?<!\beines )\bmorgen\b"),
        ("today", r"\btoday\b|\btonight\b|\bthis\s+(?:morning|afternoon|evening)\b|\bheute\b"),
        ("yesterday", r"\byesterday\b|\blast\s+night\b|\bgestern\b"),
        ("fortnight", r"\bin\s+a\s+fortnight\b|\ba\s+fortnight\s+(?:from\s+)?(?:today|now)\b|"
                      r"\bin\s+(?:14|vierzehn)\s+tagen\b"),
        ("in", rf"\b(?:in|nach|within)\s+(?P<n>\d+|an?|one|einer|einem|eine)\s+(?P<unit>{_UNIT})\b"),
        ("ago", rf"\b(?P<n>\d+|an?|one)\s+(?P<unit>{_UNIT})\s+ago\b|\bvor\s+(?P<n2>\d+|einer|einem)\s+"
                rf"(?P<unit2>{_UNIT})\b"),
        ("end_month", r"\b(?:(?:by|at|the|bis|zum|am)\s+)?(?:end\s+of\s+(?:the\s+|this\s+)?month|month[- ]end|eom|"
                      r"monatsende|ende\s+(?:des|dieses)\s+monats)\b"),
        ("end_week", r"\bend\s+of\s+(?:the\s+|this\s+)?week\b|\bende\s+der\s+woche\b|\bwochenende\s+hin\b"),
        ("end_year", r"\bend\s+of\s+(?:the\s+|this\s+)?year\b|\bjahresende\b|\bende\s+des\s+jahres\b"),
        ("next_month_start", r"\b(?:start|beginning)\s+of\s+next\s+month\b|\banfang\s+nächsten\s+monats\b|"
                             r"\bnext\s+month\b|\bnächsten\s+monat\b"),
        ("next_week_day", rf"\b(?:next\s+week|nächste\s+woche|kommende\s+woche)\s+(?:on\s+|am\s+)?"
                          rf"(?P<day>{_WEEKDAY})\b|\b(?:on\s+|am\s+)?(?P<day2>{_WEEKDAY})\s+(?:next\s+week|nächste\s+woche)\b"),
        ("next_week", r"\bnext\s+week\b|\bnächste\s+woche\b"),
        ("last_week", r"\blast\s+week\b|\bletzte\s+woche\b|\bvorige\s+woche\b"),
        ("last_weekend", r"\blast\s+weekend\b|\bletztes\s+wochenende\b|\bvergangenes\s+wochenende\b"),
        ("next_weekend", r"\bnext\s+weekend\b|\bnächstes\s+wochenende\b"),
        ("weekend", r"\b(?:this|the|on\s+the|at\s+the|over\s+the)\s+weekend\b|\bam\s+wochenende\b|"
                    r"\b(?:dieses|kommendes)\s+wochenende\b"),
        ("weekday", rf"\b(?:(?P<mod>{_NEXT}|{_THIS}|{_LAST}|{_ON})\s+)?(?P<day>{_WEEKDAY})(?:s)?\b\.?"
                    rf"(?P<timed>(?={_TIMED}))?"),
        ("month_day", rf"\b(?:on\s+)?the\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?(?:{_MONTH}))"
                      rf"(?!\s+(?:{_COUNTED})\b)|"
                      rf"\bam\s+(?P<d2>\d{{1,2}})\.(?!\s*\d)(?!\s*(?:{_MONTH}))"),
    )
)  # fmt: skip
# A weekday said just before a date names that date ("wednesday 2nd december", "am mittwoch, den 2.12.", "sat the
# 5th"): the date is the day, the weekday only its name.
_DATED = frozenset({"iso", "dmy", "dm", "md", "month_day"})
_APPOSITION = re.compile(r"[\s,]*(?:(?:den|the)\s+)?", re.IGNORECASE)
# Christmas named beside a bare day of the month: the day is December's ("xmas dinner at ours on the 25th").
_CHRISTMAS = re.compile(r"\b(?:x-?mas|christmas|weihnacht\w*|heiligabend)\b|圣诞", re.IGNORECASE)
_COUNT_WORDS = {"a": 1, "an": 1, "one": 1, "einer": 1, "einem": 1, "eine": 1}


@dataclass(frozen=True)
class Day:
    """A day the text names."""

    day: date
    start: int
    end: int
    text: str
    rolls: bool = False  # the coming weekday: a week later when the time named on it has passed today


def find_days(text: str, today: date, past: bool = False) -> list[Day]:
    """The days `text` names relative to `today`, in order; `past`: the sentence speaks of what happened, so a
    weekday or a date without a year is the latest one rather than the coming one."""
    found: list[tuple[str, Day]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _FORMS:
        for match in pattern.finditer(text):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            day = _read(kind, match, today, past)
            if day is not None:
                rolls = kind == "weekday" and day == today and not past and not _fixed_week(match)
                found.append((kind, Day(day, match.start(), match.end(), match.group(0).strip(), rolls)))
                taken.append((match.start(), match.end()))
    found.sort(key=lambda kind_day: kind_day[1].start)
    return [day for index, (kind, day) in enumerate(found)
            if not (kind == "weekday" and index + 1 < len(found) and found[index + 1][0] in _DATED
                    and _APPOSITION.fullmatch(text[day.end : found[index + 1][1].start]))]  # fmt: skip


def _read(kind: str, match: re.Match[str], today: date, past: bool) -> date | None:  # noqa: PLR0911 — one per form
    groups = {k: v for k, v in match.groupdict().items() if v is not None}
    if kind in ("iso", "dmy", "dm", "md"):
        month = int(groups["mo"]) if "mo" in groups else MONTH_NAMES[groups["month"].lower()]
        year = groups.get("y")
        if year is not None:
            return _date(int(year) + (2000 if len(year) == 2 else 0), month, int(groups["d"]))
        return _yearless(month, int(groups["d"]), today, past)
    offsets = {"after_tomorrow": 2, "before_yesterday": -2, "tomorrow": 1, "today": 0, "yesterday": -1,
               "fortnight": 14, "last_week": -7}  # fmt: skip
    if kind in offsets:
        return today + timedelta(days=offsets[kind])
    if kind == "week_after":  # "saturday week", "samstag in einer woche", "a week tomorrow": that day, a week on
        named = (groups.get("day") or groups["day2"]).lower()
        ahead = {"today": 0, "heute": 0, "tomorrow": 1, "morgen": 1}.get(named)
        if ahead is None:
            ahead = (WEEKDAY_NAMES[named] - today.weekday()) % 7
        return today + timedelta(days=ahead + 7)
    monday = today - timedelta(days=today.weekday())
    if kind in ("in", "ago"):
        count = _count(groups.get("n") or groups.get("n2") or "1")
        unit = (groups.get("unit") or groups.get("unit2") or "").lower()
        sign = -1 if kind == "ago" else 1
        if unit in _UNIT_MONTHS:
            return today + relativedelta(months=sign * count)
        return today + timedelta(days=sign * count * _UNIT_DAYS[unit]) if count <= 3660 else None
    if kind == "end_month":
        return today.replace(day=calendar.monthrange(today.year, today.month)[1])
    if kind == "end_week":
        return monday + timedelta(days=4) if today.weekday() <= 4 else monday + timedelta(days=11)
    if kind == "end_year":
        return date(today.year, 12, 31)
    if kind == "next_month_start":
        return (today.replace(day=1) + timedelta(days=32)).replace(day=1)
    if kind == "next_week":
        return monday + timedelta(days=7)
    if kind == "next_week_day":  # "nächste woche mittwoch", "wednesday next week": that day of next week
        return monday + timedelta(days=7 + WEEKDAY_NAMES[(groups.get("day") or groups["day2"]).lower()])
    if kind == "weekend":
        return today if today.weekday() >= 5 else monday + timedelta(days=5)
    if kind == "next_weekend":
        return monday + timedelta(days=12)
    if kind == "last_weekend":
        return monday - timedelta(days=2)
    if kind == "month_day":
        day = int(groups.get("d") or groups["d2"])
        if _CHRISTMAS.search(match.string) and 24 <= day <= 26:  # "xmas dinner on the 25th": December's
            return _yearless(12, day, today, past)
        return _month_day(day, today, past)
    return _weekday(groups, today, past, monday)


def _fixed_week(match: re.Match[str]) -> bool:
    """Whether the weekday's modifier fixes its week ("next Monday", "last Monday")."""
    mod = (match.groupdict().get("mod") or "").lower()
    return bool(re.fullmatch(_NEXT, mod) or re.fullmatch(_LAST, mod))


def _weekday(groups: dict[str, str], today: date, past: bool, monday: date) -> date | None:
    name = groups["day"].lower()
    mod = (groups.get("mod") or "").lower()
    if name in _AMBIGUOUS and not mod and ("timed" not in groups or name == "so"):
        return None
    index = WEEKDAY_NAMES[name]
    if re.fullmatch(_NEXT, mod):
        return monday + timedelta(days=7 + index)
    if re.fullmatch(_LAST, mod):
        back = (today.weekday() - index) % 7 or 7
        return today - timedelta(days=back)
    if past and not re.fullmatch(_THIS, mod):
        return today - timedelta(days=(today.weekday() - index) % 7)
    return today + timedelta(days=(index - today.weekday()) % 7)


def _yearless(month: int, day: int, today: date, past: bool) -> date | None:
    this_year = _date(today.year, month, day)
    if this_year is None:
        return None
    if past and this_year > today:
        return _date(today.year - 1, month, day)
    if not past and this_year < today:
        return _date(today.year + 1, month, day)
    return this_year


def _month_day(day: int, today: date, past: bool) -> date | None:
    for months in range(0, -13, -1) if past else range(13):
        first = today.replace(day=1) + relativedelta(months=months)
        candidate = _date(first.year, first.month, day)
        if candidate is not None and (candidate <= today if past else candidate >= today):
            return candidate
    return None


def _count(raw: str) -> int:
    return _COUNT_WORDS.get(raw.lower()) or int(raw)


def _date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None
