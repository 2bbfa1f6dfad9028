"""Time in the golden set: the virtual clock every case starts on, and the time expressions of its YAML.

A case starts at a fixed virtual local time (by default Monday 2026-11-23 10:00 in Europe/Berlin) and time runs
on in real time from there, so "today at 9 pm" is always ahead and expected dates never depend on when the eval
runs. Expressions are resolved on the member's wall clock:

    today 21:00, tomorrow 08:00, yesterday 18:00, +2d 10:00, 2026-12-24 18:00
    next thursday 19:00     the next Thursday strictly after today
    weekday mon 07:30       the next Monday at 07:30 from now, today included if still ahead
    monthday 1 09:00        the next 1st of a month at 09:00 from now, today included if still ahead
    in 2 hours, in 30 minutes, 5 minutes ago     from now, within ±3 minutes
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

TIMEZONE = "Europe/Berlin"
ZONE = ZoneInfo(TIMEZONE)
DEFAULT_START = datetime(2026, 11, 23, 10, 0, tzinfo=ZONE)  # a Monday

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_RELATIVE_TOLERANCE = timedelta(minutes=3)
_EXACT_TOLERANCE = timedelta(seconds=59)  # the same minute, whatever the seconds
_UNITS = {"minute": 1, "minutes": 1, "min": 1, "hour": 60, "hours": 60, "h": 60, "day": 1440, "days": 1440}
_RELATIVE = re.compile(r"(?:in (\d+) (\w+)|(\d+) (\w+) ago)")
_DAY_AND_TIME = re.compile(
    r"(today|tomorrow|yesterday|\+(\d+)d|next ([a-z]+)|weekday ([a-z]+)|monthday (\d{1,2})|(\d{4}-\d{2}-\d{2}))"
    r" (\d{1,2}):(\d{2})"
)


class VirtualClock:
    """A `tools.clock.Clock` that reads `start` when (re)started and runs on in real time from there."""

    def __init__(self, start: datetime = DEFAULT_START) -> None:
        self.start = start
        self._t0 = time.monotonic()

    def restart(self, start: datetime | None = None) -> datetime:
        """Back to `start` (or the last start): a new case begins. Returns the start."""
        if start is not None:
            self.start = start
        self._t0 = time.monotonic()
        return self.start

    def now(self) -> datetime:
        return (self.start + timedelta(seconds=time.monotonic() - self._t0)).astimezone(UTC)


def parse_start(text: str | None) -> datetime:
    """`--now`: an ISO date-time; without an offset it is Europe/Berlin's wall clock."""
    if not text:
        return DEFAULT_START
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=ZONE)


@dataclass(frozen=True)
class Moment:
    """An expected wall-clock time (naive, Europe/Berlin) and how far off a row may be."""

    local: datetime
    tolerance: timedelta

    def matches(self, instant: datetime) -> bool:
        return abs(local(instant) - self.local) <= self.tolerance


def local(instant: datetime) -> datetime:
    """The naive wall time an aware instant shows in Europe/Berlin."""
    return instant.astimezone(ZONE).replace(tzinfo=None)


def _weekday(name: str, expr: str) -> int:
    """0 for Monday … 6 for Sunday; `name` is a weekday's name or its first three letters or more."""
    for index, full in enumerate(_WEEKDAYS):
        if len(name) >= 3 and full.startswith(name):
            return index
    raise ValueError(f"unknown weekday {name!r} in time expression {expr!r}")


def check(expr: str) -> str:
    """`expr` unchanged when it is a valid time expression; ValueError otherwise (used when loading cases)."""
    resolve(expr, DEFAULT_START)
    return expr


def resolve(expr: str, now: datetime) -> Moment:
    """The wall-clock time `expr` names, seen from the aware instant `now`."""
    text = " ".join(expr.lower().split())
    here = local(now)
    if match := _RELATIVE.fullmatch(text):
        count, unit = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        if unit not in _UNITS:
            raise ValueError(f"unknown unit {unit!r} in time expression {expr!r}")
        minutes = int(count) * _UNITS[unit] * (1 if match.group(1) else -1)
        return Moment(here + timedelta(minutes=minutes), _RELATIVE_TOLERANCE)
    match = _DAY_AND_TIME.fullmatch(text)
    if match is None:
        raise ValueError(f"not a time expression: {expr!r} (e.g. 'tomorrow 08:00', 'in 2 hours')")
    hour, minute = int(match.group(7)), int(match.group(8))
    if hour > 23 or minute > 59:
        raise ValueError(f"no such time of day in {expr!r}")
    day = _day(match, text, here, hour, minute)
    return Moment(datetime(day.year, day.month, day.day, hour, minute), _EXACT_TOLERANCE)


def _day(match: re.Match[str], expr: str, here: datetime, hour: int, minute: int) -> date:
    today = here.date()
    word, plus, next_day, weekday, monthday, iso = match.groups()[:6]
    if word in ("today", "tomorrow", "yesterday"):
        return today + timedelta(days={"today": 0, "tomorrow": 1, "yesterday": -1}[word])
    if plus is not None:
        return today + timedelta(days=int(plus))
    if next_day is not None:
        ahead = (_weekday(next_day, expr) - today.weekday() - 1) % 7 + 1
        return today + timedelta(days=ahead)
    if weekday is not None:
        wanted = _weekday(weekday, expr)
        ahead = (wanted - today.weekday()) % 7
        if ahead == 0 and (hour, minute) <= (here.hour, here.minute):
            ahead = 7
        return today + timedelta(days=ahead)
    if monthday is not None:
        return _next_monthday(int(monthday), here, hour, minute, expr)
    return date.fromisoformat(iso)


def _next_monthday(day: int, here: datetime, hour: int, minute: int, expr: str) -> date:
    if not 1 <= day <= 31:
        raise ValueError(f"no such day of the month in {expr!r}")
    year, month = here.year, here.month
    for _ in range(14):  # every day from 1 to 31 occurs within a year
        try:
            candidate = datetime(year, month, day, hour, minute)
        except ValueError:
            candidate = None
        if candidate is not None and candidate > here.replace(second=0, microsecond=0):
            return candidate.date()
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    raise ValueError(f"no day {day} ahead in {expr!r}")


def seed_moment(when: str, now: datetime) -> datetime:
    """A moment for a seed in the household's calendar: `today` (a minute ago), `yesterday`, `this_month`
    (yesterday, or earlier today on the 1st), `last_month` (the 15th) or `days_ago_N`."""
    here = now.astimezone(ZONE)
    if when == "today":
        return here - timedelta(minutes=1)
    if when == "yesterday":
        return here - timedelta(days=1)
    if when == "this_month":
        return here - timedelta(days=1) if here.day > 1 else here.replace(hour=0, minute=30)
    if when == "last_month":
        return (here.replace(day=1) - timedelta(days=1)).replace(day=15, hour=12)
    if match := re.fullmatch(r"days_ago_(\d+)", when):
        return here - timedelta(days=int(match.group(1)))
    raise ValueError(f"unknown seed time {when!r}")
