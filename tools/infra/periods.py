"""Calendar arithmetic in the member's timezone: ISO moments, named periods as UTC ranges."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Literal, TypeVar, get_args
from zoneinfo import ZoneInfo

Period = Literal[
    "today",
    "yesterday",
    "this_week",
    "last_week",
    "this_month",
    "last_month",
    "this_year",
    "last_year",
    "last_7_days",
    "last_30_days",
]
PERIODS: tuple[str, ...] = get_args(Period)

# The years a date may have. Far enough for any family's past and plans; near enough that a day either side of any
# date, in any timezone, is still a date Python and PostgreSQL can hold.
MIN_YEAR, MAX_YEAR = 1900, 2200
_Moment = TypeVar("_Moment", bound=date)


def parse_moment(text: str) -> date | datetime:
    """An ISO 8601 date or date-time (naive or with an offset) in the years MIN_YEAR..MAX_YEAR."""
    text = text.strip()
    try:
        moment = date.fromisoformat(text) if len(text) <= 10 else datetime.fromisoformat(text)
    except ValueError:
        example = "e.g. 2025-03-14 or 2025-03-14T18:30"
        raise ValueError(f"{text!r} is not an ISO 8601 date or date-time ({example})") from None
    return check_year(moment)


def check_year(moment: _Moment) -> _Moment:
    """`moment` (a date or date-time) when its year is MIN_YEAR..MAX_YEAR; ValueError, for the model, otherwise."""
    if not MIN_YEAR <= moment.year <= MAX_YEAR:
        raise ValueError(f"{moment.isoformat()} is out of range: give a date in the years {MIN_YEAR} to {MAX_YEAR}")
    return moment


def localize(moment: date | datetime, tz: ZoneInfo, at: time = time(0)) -> datetime:
    """An aware UTC instant: naive date-times and dates (at `at` o'clock) are read in `tz`."""
    if not isinstance(moment, datetime):
        moment = datetime.combine(moment, at)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return moment.astimezone(UTC)


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def period_range(period: str, now: datetime, timezone: str) -> tuple[datetime, datetime]:
    """[start, end) in UTC of a named period around `now`, as the member's calendar sees it (weeks start Monday)."""
    tz = ZoneInfo(timezone)
    today = (now if now.tzinfo else now.replace(tzinfo=UTC)).astimezone(tz).date()
    monday = today - timedelta(days=today.weekday())
    first = today.replace(day=1)
    year = date(today.year, 1, 1)
    day = timedelta(days=1)
    spans: dict[str, tuple[date, date]] = {
        "today": (today, today + day),
        "yesterday": (today - day, today),
        "this_week": (monday, monday + 7 * day),
        "last_week": (monday - 7 * day, monday),
        "this_month": (first, _add_months(first, 1)),
        "last_month": (_add_months(first, -1), first),
        "this_year": (year, date(today.year + 1, 1, 1)),
        "last_year": (date(today.year - 1, 1, 1), year),
        "last_7_days": (today - 6 * day, today + day),
        "last_30_days": (today - 29 * day, today + day),
    }
    if period not in spans:
        raise ValueError(f"unknown period {period!r}; use one of {', '.join(PERIODS)}")
    start, end = spans[period]
    return localize(start, tz), localize(end, tz)
