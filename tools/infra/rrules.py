"""RRULE text as a reminder may use it: every part checked before python-dateutil sees the rule.

dateutil accepts parts out of range (BYHOUR=25 ends in a TypeError deep inside it) and rules that can never fire
(BYMONTH=2;BYMONTHDAY=30 makes it scan every period up to the year 9999). Here a rule is refused up front, with a
message that names the part to fix: unknown or repeated parts, values out of range, a repetition more often than
every 15 minutes, and days that no calendar has. What is left — rare combinations, intervals that never meet their
BY parts — is caught by the bounded search in `tools.infra.recurrence`.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from tools.errors import RecurrenceError
from tools.infra.periods import MAX_YEAR, MIN_YEAR

MIN_GAP_MINUTES = 15
MAX_COUNT = 1000
HORIZON_YEARS = 10  # a rule must fire within this many years of its start, and keep doing so

FREQS = ("YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY")
WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
# name: (lowest, highest, negative values allowed)
_NUMBERS = {
    "BYMINUTE": (0, 59, False),
    "BYHOUR": (0, 23, False),
    "BYMONTH": (1, 12, False),
    "BYMONTHDAY": (1, 31, True),
    "BYYEARDAY": (1, 366, True),
    "BYWEEKNO": (1, 53, True),
    "BYSETPOS": (1, 366, True),
}
PARTS = ("FREQ", "INTERVAL", "COUNT", "UNTIL", "BYDAY", *_NUMBERS, "WKST")
_PERIODS_PER_YEAR = {"YEARLY": 1, "MONTHLY": 12, "WEEKLY": 52, "DAILY": 365, "HOURLY": 8760, "MINUTELY": 525_600}
_BYDAY_ITEM = re.compile(r"([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)")
_UNTIL = re.compile(r"(\d{8})(?:T(\d{6})(Z?))?")
_EXAMPLE = "e.g. FREQ=WEEKLY;BYDAY=MO or FREQ=MONTHLY;BYMONTHDAY=1"


@dataclass(frozen=True)
class RuleParts:
    """A checked rule: its parts, upper-cased, in the order given."""

    parts: dict[str, str]

    @property
    def freq(self) -> str:
        return self.parts["FREQ"]

    def text(self) -> str:
        return ";".join(f"{name}={value}" for name, value in self.parts.items())


def check_rule(text: str, dtstart: datetime) -> RuleParts:
    """The parts of one RRULE value (an `RRULE:` prefix is allowed) whose first time is `dtstart`; RecurrenceError
    when a part is unknown, repeated, out of range or impossible together with the others."""
    parts = _split(text)
    freq = parts.get("FREQ")
    if freq is None:
        raise RecurrenceError(f"the rule needs FREQ, {_EXAMPLE}")
    if freq == "SECONDLY" or freq not in FREQS:
        if freq == "SECONDLY":
            raise RecurrenceError(f"a reminder repeats at most every {MIN_GAP_MINUTES} minutes")
        raise RecurrenceError(f"FREQ={freq} is not one of {', '.join(FREQS)}")
    numbers = {name: _numbers(name, parts[name]) for name in _NUMBERS if name in parts}
    _check_interval(freq, parts.get("INTERVAL"))
    _check_count_and_until(parts)
    _check_byday(freq, parts.get("BYDAY"), "BYMONTH" in parts)
    if "WKST" in parts and parts["WKST"] not in WEEKDAYS:
        raise RecurrenceError(f"WKST={parts['WKST']} is not a weekday ({', '.join(WEEKDAYS)})")
    _check_gaps(numbers.get("BYMINUTE", []))
    _check_setpos(freq, numbers)
    _check_days_exist(freq, parts, numbers, dtstart)
    _check_weeks_meet_months(numbers)
    return RuleParts(parts)


def _split(text: str) -> dict[str, str]:
    value = text.strip()
    if value.upper().startswith("RRULE:"):
        value = value[6:].strip()
    if not value or "\n" in value or ":" in value:
        raise RecurrenceError(f"give one RRULE value, {_EXAMPLE} (no DTSTART: the first time goes in `when`)")
    parts: dict[str, str] = {}
    for segment in filter(None, (piece.strip() for piece in value.split(";"))):
        name, equals, item = segment.partition("=")
        name, item = name.strip().upper(), item.strip().upper()
        if not equals or not name or not item:
            raise RecurrenceError(f"{segment!r} is not NAME=VALUE: give an RFC 5545 RRULE, {_EXAMPLE}")
        if name == "BYSECOND":
            raise RecurrenceError("reminders are to the minute: leave BYSECOND out")
        if name not in PARTS:
            raise RecurrenceError(f"{name} is not a part a reminder can use; use {', '.join(PARTS)}")
        if name in parts:
            raise RecurrenceError(f"{name} appears twice; give each part once")
        parts[name] = item
    return parts


def _integer(name: str, item: str) -> int:
    if not re.fullmatch(r"[+-]?\d{1,6}", item):
        raise RecurrenceError(f"{name}={item} is not a whole number")
    return int(item)


def _numbers(name: str, value: str) -> list[int]:
    low, high, signed = _NUMBERS[name]
    found = []
    for item in value.split(","):
        number = _integer(name, item.strip())
        if not (low <= number <= high or (signed and -high <= number <= -low)):
            allowed = f"{low}..{high}" + (f" or -{high}..-{low}" if signed else "")
            raise RecurrenceError(f"{name} takes values {allowed}, not {number}")
        found.append(number)
    return found


def _check_interval(freq: str, value: str | None) -> None:
    interval = 1 if value is None else _integer("INTERVAL", value)
    most = HORIZON_YEARS * _PERIODS_PER_YEAR[freq]
    if not 1 <= interval <= most:
        raise RecurrenceError(
            f"INTERVAL with FREQ={freq} takes 1..{most} (a reminder repeats within {HORIZON_YEARS} years)"
        )
    if freq == "MINUTELY" and interval < MIN_GAP_MINUTES:
        raise RecurrenceError(f"a reminder repeats at most every {MIN_GAP_MINUTES} minutes")


def _check_count_and_until(parts: dict[str, str]) -> None:
    if "COUNT" in parts and "UNTIL" in parts:
        raise RecurrenceError("give COUNT or UNTIL, not both")
    if "COUNT" in parts and not 1 <= _integer("COUNT", parts["COUNT"]) <= MAX_COUNT:
        raise RecurrenceError(f"COUNT takes 1..{MAX_COUNT}; leave it out for a reminder that repeats until cancelled")
    if "UNTIL" in parts:
        match = _UNTIL.fullmatch(parts["UNTIL"])
        try:
            if match is None:
                raise ValueError
            stamp = datetime.strptime(match.group(1) + (match.group(2) or "000000"), "%Y%m%d%H%M%S")
        except ValueError:
            raise RecurrenceError(f"UNTIL={parts['UNTIL']} is not a date like 20261231 or 20261231T235900Z") from None
        if not MIN_YEAR <= stamp.year <= MAX_YEAR:
            raise RecurrenceError(f"UNTIL takes a year from {MIN_YEAR} to {MAX_YEAR}")


def _check_byday(freq: str, value: str | None, by_month: bool) -> None:
    if value is None:
        return
    for item in value.split(","):
        match = _BYDAY_ITEM.fullmatch(item.strip())
        if match is None:
            raise RecurrenceError(f"BYDAY takes weekdays like MO,WE or 1MO / -1FR, not {item!r}")
        if match.group(1) is None:
            continue
        nth = int(match.group(1))
        if freq not in ("MONTHLY", "YEARLY"):
            raise RecurrenceError(f"BYDAY={item} (the nth weekday) needs FREQ=MONTHLY or FREQ=YEARLY")
        most = 5 if freq == "MONTHLY" or by_month else 53
        if not 1 <= abs(nth) <= most:
            raise RecurrenceError(
                f"BYDAY={item}: the nth weekday of a {'month' if most == 5 else 'year'} is 1..{most} or -{most}..-1"
            )


def _check_gaps(minutes: list[int]) -> None:
    """Two BYMINUTE values closer than the minimum gap (on the circle of an hour) fire too often."""
    ordered = sorted(set(minutes))
    if len(ordered) < 2:
        return
    gaps = [following - current for current, following in zip(ordered, [*ordered[1:], ordered[0] + 60], strict=True)]
    if min(gaps) < MIN_GAP_MINUTES:
        raise RecurrenceError(f"BYMINUTE values must be {MIN_GAP_MINUTES} minutes apart or more")


_DAYS_PER_PERIOD = {"WEEKLY": 7, "MONTHLY": 31, "YEARLY": 366}


def _check_setpos(freq: str, numbers: dict[str, list[int]]) -> None:
    """BYSETPOS picks days of a week, month or year ("the last weekday of the month"), at one time of day."""
    positions = numbers.get("BYSETPOS")
    if positions is None:
        return
    if freq not in _DAYS_PER_PERIOD:
        raise RecurrenceError("BYSETPOS picks among the days of a period: use it with FREQ=WEEKLY, MONTHLY or YEARLY")
    if len(numbers.get("BYHOUR", [0])) > 1 or len(numbers.get("BYMINUTE", [0])) > 1:
        raise RecurrenceError("with BYSETPOS give one time of day (one BYHOUR and one BYMINUTE value at most)")
    most = _DAYS_PER_PERIOD[freq]
    if any(abs(position) > most for position in positions):
        raise RecurrenceError(f"BYSETPOS with FREQ={freq} takes 1..{most} or -{most}..-1")


def _check_days_exist(freq: str, parts: dict[str, str], numbers: dict[str, list[int]], dtstart: datetime) -> None:
    """Some date of a leap or a common year has the rule's month, day of the month and day of the year."""
    months = numbers.get("BYMONTH")
    month_days = numbers.get("BYMONTHDAY")
    year_days = numbers.get("BYYEARDAY")
    by_date = ("BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYDAY")
    implied = ""
    if freq in ("YEARLY", "MONTHLY") and not any(name in parts for name in by_date):
        month_days = [dtstart.day]  # dateutil repeats on the day of the first time, as RFC 5545 does
        implied = f" (the day {dtstart.day} comes from the first time)"
        if freq == "YEARLY" and months is None:
            months = [dtstart.month]
    if month_days is None and year_days is None:
        return
    wanted_months, wanted_days, wanted_year_days = (
        set(months or range(1, 13)),
        set(month_days or ()),
        set(year_days or ()),
    )
    for february in (29, 28):  # a leap year and a common one
        lengths = (31, february, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
        year_length, before = sum(lengths), 0
        for month, last in enumerate(lengths, start=1):
            for day in range(1, last + 1) if month in wanted_months else ():
                if month_days is not None and day not in wanted_days and day - last - 1 not in wanted_days:
                    continue
                index = before + day
                if year_days is None or index in wanted_year_days or index - year_length - 1 in wanted_year_days:
                    return
            before += last
    given = [f"{name}={parts[name]}" for name in ("BYMONTH", "BYMONTHDAY", "BYYEARDAY") if name in parts]
    raise RecurrenceError(
        f"the rule can never fire: no date has {' and '.join(given) or 'that day'}{implied}; "
        "e.g. BYMONTHDAY=30 never falls in February"
    )


def _check_weeks_meet_months(numbers: dict[str, list[int]]) -> None:
    """Some week of BYWEEKNO has a day in a month of BYMONTH. Week n starts within 3 days of day 7(n-1) of the year
    (week 1 is the first with 4 days in the year), so its days lie within days 7(n-1)-3 .. 7n+2."""
    weeks, months = numbers.get("BYWEEKNO"), numbers.get("BYMONTH")
    if weeks is None or months is None:
        return
    for year in (2024, 2025):
        length = 366 if calendar.isleap(year) else 365
        for week in weeks:
            first = 7 * (week - 1) - 3 if week > 0 else length + 7 * week - 3
            for index in range(first, first + 13):
                if (date(year, 1, 1) + timedelta(days=index)).month in months:
                    return
    raise RecurrenceError(
        f"the rule can never fire: no week of BYWEEKNO={','.join(map(str, weeks))} has a day in "
        f"BYMONTH={','.join(map(str, months))}"
    )
