"""The period a question asks about, with exact bounds on the member's calendar: "this month", "since the start of the
month", "this month so far", "last weekend", "over the summer", "in October", "seit Monatsanfang", "letztes
Wochenende", "上周末", "今年夏天", "this year", "the rest of the week".

A period is its first and last day (both included, as the filter language's `between` reads bare dates), and, where
the filter language has a name for it ("this_month", "last_week" …), that name. A period "so far" ends today; a
month or season named without a year is the latest one that has begun ("in October" said in November is this
year's; "over the summer" said in March is last year's), unless "next" or "coming" points ahead. Seasons are the
meteorological ones (summer is June to August), turned round for members south of the equator (their timezone's
place in the tz database says which).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache
from importlib import resources
from typing import Any

from dateutil.relativedelta import relativedelta

from engine.grounding.days import MONTH_NAMES, WEEKDAY_NAMES


@dataclass(frozen=True)
class Span:
    """A period of whole days the message names."""

    text: str  # as the member wrote it
    first: date
    last: date  # included
    name: str | None = None  # the filter language's name for it, when it has one ("this_month")

    def condition(self, field: str = "occurred_at") -> dict[str, Any]:
        """The filter condition that keeps what happened in this period."""
        return {"field": field, "op": "between", "value": [self.first.isoformat(), self.last.isoformat()]}


_SEASONS = {  # season -> its first month in the north
    "spring": 3, "frühling": 3, "frühjahr": 3, "春天": 3, "春季": 3,
    "summer": 6, "sommer": 6, "夏天": 6, "夏季": 6, "暑假": 7,
    "autumn": 9, "fall": 9, "herbst": 9, "秋天": 9, "秋季": 9,
    "winter": 12, "寒假": 1, "冬天": 12, "冬季": 12,
}  # fmt: skip
_SEASON = "|".join(name for name in _SEASONS if name.isascii() or name[0] in "fh")
_MONTH = "|".join(sorted((m for m in MONTH_NAMES if len(m) > 3 or m == "mai"), key=len, reverse=True))
_WEEKDAY = "|".join(sorted((d for d in WEEKDAY_NAMES if len(d) > 4), key=len, reverse=True))
_CN_MONTHS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10, "十一": 11,
              "十二": 12}  # fmt: skip
_AHEAD = re.compile(r"\b(?:next|coming|nächste[nms]?|kommende[nms]?)\s*$|下个?$")
_BACK = re.compile(r"\b(?:last|previous|letzte[nms]?|vorige[nms]?|vergangene[nms]?)\s*$|去年$")

Reader = Callable[[re.Match[str], date, bool], "tuple[date, date, str | None] | None"]


def _month_bounds(day: date) -> tuple[date, date]:
    first = day.replace(day=1)
    return first, first.replace(day=calendar.monthrange(first.year, first.month)[1])


def _week(today: date, weeks: int = 0) -> tuple[date, date]:
    monday = today - timedelta(days=today.weekday()) + timedelta(weeks=weeks)
    return monday, monday + timedelta(days=6)


def _fixed(name: str | None, bounds: Callable[[date], tuple[date, date]]) -> Reader:
    return lambda match, today, south: (*bounds(today), name)


def _since_weekday(match: re.Match[str], today: date, south: bool) -> tuple[date, date, str | None]:
    index = WEEKDAY_NAMES[match.group("day").lower()]
    return today - timedelta(days=(today.weekday() - index) % 7), today, None


def _since_month(match: re.Match[str], today: date, south: bool) -> tuple[date, date, str | None]:
    month = MONTH_NAMES[match.group("month").lower()]
    year = today.year if month <= today.month else today.year - 1
    return date(year, month, 1), today, None


def _named_month(match: re.Match[str], today: date, south: bool) -> tuple[date, date, str | None] | None:
    groups = match.groupdict()
    raw = groups.get("month") or ""
    month = MONTH_NAMES.get(raw.lower()) or (int(raw) if raw.isdigit() else _CN_MONTHS.get(raw))
    if month is None or not 1 <= month <= 12:
        return None
    before = match.string[: match.start()]
    if groups.get("year"):
        year = int(groups["year"])
    elif _AHEAD.search(before) or (groups.get("mod") or "").lower() in ("next", "coming", "nächsten", "kommenden"):
        year = today.year if month > today.month else today.year + 1
    elif _BACK.search(before) or (groups.get("mod") or "").lower() in ("last", "letzten", "vorigen"):
        year = today.year if month < today.month else today.year - 1
    else:
        year = today.year if month <= today.month else today.year - 1
    return (*_month_bounds(date(year, month, 1)), None)


def _year(match: re.Match[str], today: date, south: bool) -> tuple[date, date, str | None] | None:
    year = int(match.group("year"))
    return (date(year, 1, 1), date(year, 12, 31), None) if 1900 <= year <= 2200 else None


def _season(match: re.Match[str], today: date, south: bool) -> tuple[date, date, str | None]:
    name = match.group("season").lower()
    first_month = _SEASONS[name]
    if south and not name.startswith(("暑", "寒")):
        first_month = (first_month + 6 - 1) % 12 + 1
    length = 1 if name.startswith(("暑", "寒")) else 3

    def instance(year: int) -> tuple[date, date]:
        first = date(year, first_month, 1)
        return first, (first + relativedelta(months=length)) - timedelta(days=1)

    instances = [instance(year) for year in range(today.year - 2, today.year + 2)]
    started = [span for span in instances if span[0] <= today]
    current = next((span for span in instances if span[0] <= today <= span[1]), None)
    mod = (match.group("mod") or "").lower()
    if mod in ("next", "nächsten", "kommenden", "明年"):
        first, last = next(span for span in instances if span[0] > today)
    elif mod in ("last", "letzten", "vorigen", "vergangenen", "去年"):
        first, last = started[-2] if current is not None else started[-1]
    else:
        first, last = current or started[-1]
    return first, last, None


def _last_days(count: int) -> Callable[[date], tuple[date, date]]:
    return lambda today: (today - timedelta(days=count - 1), today)


# (pattern, reader), tried in order: the first that matches names the period. Patterns read lowercased text.
_FORMS: tuple[tuple[re.Pattern[str], Reader], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), reader)
    for pattern, reader in (
        (r"\bsince the (?:start|beginning) of (?:the |this )?month\b|\bthis month so far\b|\bso far this month\b|"
         r"\bmonth to date\b|\bmtd\b|\bseit (?:monatsanfang|(?:dem )?(?:anfang|beginn) (?:des|dieses) monats|"
         r"anfang des monats)\b|\b(?:diesen|in diesem) monat bisher\b|\bbisher (?:diesen|in diesem) monat\b|"
         r"本月以来|这个月以来|(?:从|自)?(?:这个|本)?月初(?:以来|到现在|到目前为止|至今|开始)|这个月到目前为止|本月到目前为止|"
         r"这个月到现在",
         _fixed("this_month", lambda t: (t.replace(day=1), t))),
        (r"\bsince the (?:start|beginning) of (?:the |this )?year\b|\bthis year so far\b|\bso far this year\b|"
         r"\byear to date\b|\bytd\b|\bseit (?:jahresanfang|jahresbeginn|anfang des jahres)\b|今年以来|今年到目前为止",
         _fixed("this_year", lambda t: (date(t.year, 1, 1), t))),
        (r"\bsince the (?:start|beginning) of (?:the |this )?week\b|\bthis week so far\b|\bso far this week\b|"
         r"\bseit (?:wochenanfang|wochenbeginn|anfang der woche)\b|本周以来|这周以来",
         _fixed("this_week", lambda t: (_week(t)[0], t))),
        (rf"\b(?:since|seit)\s+(?:last\s+|letztem\s+|letzten\s+)?(?P<day>{_WEEKDAY})\b", _since_weekday),
        (rf"\b(?:since|seit)\s+(?:the\s+(?:start|beginning)\s+of\s+|anfang\s+)?(?P<month>{_MONTH})\b", _since_month),
        (r"\blast weekend\b|\b(?:letztes|vergangenes|voriges) wochenende\b|上个?周末|上个?礼拜天",
         _fixed(None, lambda t: (_week(t, -1)[0] + timedelta(days=5), _week(t, -1)[1]))),
        (r"\bthis weekend\b|\bdieses wochenende\b|这个?周末|本周末",
         _fixed(None, lambda t: (_week(t)[0] + timedelta(days=5), _week(t)[1]))),
        (r"\bnext weekend\b|\bnächstes wochenende\b|下个?周末",
         _fixed(None, lambda t: (_week(t, 1)[0] + timedelta(days=5), _week(t, 1)[1]))),
        (r"\b(?:the\s+)?rest of (?:the|this) week\b|\b(?:den\s+)?rest der woche\b|这周(?:剩下|余下)|本周(?:剩下|余下)",
         _fixed("this_week", lambda t: (t, _week(t)[1]))),
        (r"\b(?:the\s+)?rest of (?:the|this) month\b|\b(?:den\s+)?rest des monats\b|这个月(?:剩下|余下)",
         _fixed("this_month", lambda t: (t, _month_bounds(t)[1]))),
        (rf"(?:\b(?P<mod>last|next|this|letzten|nächsten|diesen|vorigen|vergangenen|kommenden)\s+|"
         rf"\b(?:over|during|in|im|über|through|throughout|across)\s+(?:the\s+|den\s+)?)(?P<season>{_SEASON})\b",
         _season),
        (r"(?P<mod>去年|今年|明年)?(?P<season>夏天|夏季|春天|春季|秋天|秋季|冬天|冬季|暑假|寒假)", _season),
        (r"\b(?:last|past|previous) (?:7|seven) days\b|\bthe last week\b|最近(?:7|七)天|最近一周|过去(?:7|七)天|"
         r"\b(?:letzten|vergangenen) (?:7|sieben) tage", _fixed("last_7_days", _last_days(7))),
        (r"\b(?:last|past|previous) (?:30|thirty) days\b|最近(?:30|三十)天|最近一个月|过去(?:30|三十)天|"
         r"\b(?:letzten|vergangenen) (?:30|dreißig) tage", _fixed("last_30_days", _last_days(30))),
        (r"\blast month\b|\bprevious month\b|上个?月|\b(?:letzten|vorigen|vergangenen) monat(?!en)",
         _fixed("last_month", lambda t: _month_bounds(t.replace(day=1) - timedelta(days=1)))),
        (r"\bthis month\b|这个月|本月|这月|\b(?:diesen|dieser|diesem) monat",
         _fixed("this_month", _month_bounds)),
        (r"\bnext month\b|下个?月|\b(?:nächsten|kommenden) monat(?!en)",
         _fixed(None, lambda t: _month_bounds(_month_bounds(t)[1] + timedelta(days=1)))),
        (r"\blast week\b|\bprevious week\b|上(?:个)?(?:周|星期|礼拜)|\b(?:letzte|vorige|vergangene) woche",
         _fixed("last_week", lambda t: _week(t, -1))),
        (r"\bthis week\b|这(?:个)?(?:周|星期|礼拜)|本周|\bdiese woche", _fixed("this_week", _week)),
        (r"\bnext week\b|下(?:个)?(?:周|星期|礼拜)|\bnächste woche", _fixed(None, lambda t: _week(t, 1))),
        (r"\blast year\b|去年|\b(?:letztes|voriges|vergangenes) jahr",
         _fixed("last_year", lambda t: (date(t.year - 1, 1, 1), date(t.year - 1, 12, 31)))),
        (r"\bthis year\b|今年|\bdieses jahr",
         _fixed("this_year", lambda t: (date(t.year, 1, 1), date(t.year, 12, 31)))),
        (rf"\b(?:(?P<mod>last|next|this|coming|letzten|nächsten|diesen|kommenden|vorigen)\s+|"
         rf"(?:in|im|during|for|throughout|über|seit|since)\s+(?:the\s+month\s+of\s+|den\s+)?)(?P<month>{_MONTH})\b"
         r"(?:\s+(?P<year>\d{4}))?(?!\s*\d)", _named_month),  # "in March", not "March 3" (a day)
        (r"\b(?:in|during|throughout|since)\s+(?P<month>may)\b(?:\s+(?P<year>\d{4}))?(?!\s*\d)", _named_month),
        (r"(?<![个一二两三四五六七八九十\d])(?P<month>十[一二]?|[一二三四五六七八九]|1[0-2]|[1-9])月(?:份)?"
         r"(?![\d一二三四五六七八九十]+[日号])(?!底|初|中)", _named_month),
        (r"\b(?:in|im|during|for|throughout)\s+(?:the\s+year\s+|dem\s+jahr\s+)?(?P<year>(?:19|20)\d{2})\b"
         r"(?!\s*(?:€|eur|euros?|dollars?|\$|£|chf|pounds?|quid|yuan|元|块))", _year),
        (r"(?P<year>(?:19|20)\d{2})年(?!\d|[一二三四五六七八九十]+月)", _year),
        (r"\byesterday\b|昨天|\bgestern\b", _fixed("yesterday", lambda t: (t - timedelta(days=1),) * 2)),
        (r"\btoday\b|今天|\bheute\b", _fixed("today", lambda t: (t, t))),
        (r"\btomorrow\b|明天|\bmorgen\b(?!\s*früh)", _fixed(None, lambda t: (t + timedelta(days=1),) * 2)),
    )
)  # fmt: skip


def find_span(text: str, today: date, timezone: str = "UTC") -> Span | None:
    """The period `text` names, with its bounds around `today` (the member's date in `timezone`), if any."""
    lowered = text.lower()
    for pattern, reader in _FORMS:
        match = pattern.search(lowered)
        if match is None:
            continue
        read = reader(match, today, _south(timezone))
        if read is not None:
            first, last, name = read
            return Span(match.group(0).strip(), first, last, name)
    return None


@cache
def _south(timezone: str) -> bool:
    """Whether the place a timezone is named for lies south of the equator (zone1970.tab of the tz database)."""
    try:
        table = resources.files("tzdata").joinpath("zoneinfo", "zone1970.tab").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        return False
    for line in table.splitlines():
        fields = line.split("\t")
        if len(fields) >= 3 and not line.startswith("#") and fields[2] == timezone:
            return fields[1].startswith("-")
    return False
