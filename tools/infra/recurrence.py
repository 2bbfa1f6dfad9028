"""Wall-clock time in an IANA timezone: RFC 5545 recurrences (python-dateutil), DST gaps and folds, quiet hours.

A recurring reminder keeps its wall-clock time ("every Monday at 07:30") in its timezone, whatever the UTC
offset does. Two wall times need a rule, and the rule is the same everywhere in FAA:

- a time that does not exist (the spring-forward gap, e.g. 02:30 in Berlin on the last Sunday of March) is
  shifted forward by the length of the gap: 02:30 → 03:30 the new offset;
- a time that exists twice (the fall-back fold, e.g. 02:30 on the last Sunday of October) means the first of
  the two, the one still on summer time.
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import MAXYEAR, UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from dateutil.rrule import DAILY, HOURLY, MINUTELY, WEEKLY, rrule, rrulestr

from tools.errors import RecurrenceError
from tools.infra.rrules import HORIZON_YEARS, check_rule

__all__ = [
    "HORIZON",
    "RecurrenceError",
    "is_wall_time_real",
    "next_occurrence",
    "occurrences",
    "parse_rule",
    "quiet_until",
    "resolve_wall_time",
    "upcoming",
    "wall_time",
]

HORIZON = timedelta(days=round(HORIZON_YEARS * 365.25))  # how far ahead an occurrence is looked for
_MAX_SCAN = 50_000  # occurrences looked at before a rule is taken to have no more
_UNTIL_UTC = re.compile(r"UNTIL=(\d{8}T\d{6})Z", re.I)
# The frequencies whose periods have a fixed length on the wall clock: a search may start at a later step.
_STEPS = {
    WEEKLY: timedelta(weeks=1),
    DAILY: timedelta(days=1),
    HOURLY: timedelta(hours=1),
    MINUTELY: timedelta(minutes=1),
}


def resolve_wall_time(local: datetime, tz: ZoneInfo) -> datetime:
    """The UTC instant of a naive wall time in `tz`: gaps shift forward by the gap, folds take the first.

    PEP 495 gives exactly that for fold=0: a time in a gap is read with the offset in force before it (so it
    lands as far past the gap's end as it was past its start), and an ambiguous time with the earlier offset.
    """
    return local.replace(tzinfo=tz, fold=0).astimezone(UTC)


def wall_time(instant: datetime, tz: ZoneInfo) -> datetime:
    """The naive wall time `instant` shows in `tz`."""
    return instant.astimezone(tz).replace(tzinfo=None)


def is_wall_time_real(local: datetime, tz: ZoneInfo) -> bool:
    """False for a wall time inside a DST gap (it never shows on a clock there)."""
    return wall_time(resolve_wall_time(local, tz), tz) == local


def parse_rule(text: str, dtstart_local: datetime, tz: ZoneInfo) -> rrule:
    """One RFC 5545 RRULE value (`FREQ=WEEKLY;BYDAY=MO`, an `RRULE:` prefix is allowed) anchored at the naive
    wall time `dtstart_local`, its parts checked by `tools.infra.rrules`. A UTC `UNTIL` is read as the wall time it
    shows in `tz`."""
    value = check_rule(text, dtstart_local).text()
    value = _UNTIL_UTC.sub(lambda m: "UNTIL=" + _local_until(m.group(1), tz), value)
    try:
        rule = rrulestr(value, dtstart=dtstart_local)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        raise RecurrenceError(f"{text!r} is not a valid RFC 5545 RRULE ({exc})") from None
    if not isinstance(rule, rrule):
        raise RecurrenceError("give a single RRULE")
    return rule


def _local_until(stamp: str, tz: ZoneInfo) -> str:
    instant = datetime.strptime(stamp, "%Y%m%dT%H%M%S").replace(tzinfo=UTC)
    return wall_time(instant, tz).strftime("%Y%m%dT%H%M%S")


def occurrences(rule: rrule, tz: ZoneInfo, after: datetime, *, inclusive: bool = False) -> Iterator[datetime]:
    """UTC instants of the rule's occurrences after `after` (or at it, with `inclusive`) and at most HORIZON
    later, in order; RecurrenceError when dateutil finds the rule empty on the way.

    The work is bounded whatever the rule: dateutil walks every period from the rule's start until it finds an
    occurrence, and for a rule that never fires it walks to the year 9999. So the walk starts at the last whole
    step before `after` where the period has a fixed length, and runs on the same calendar some thousands of years
    later (`_Frame`), where dateutil's own end of the calendar comes soon after the horizon.
    """
    local_after = wall_time(after, tz)
    # A day early: the wall time of `after` can be up to a day off its UTC order near a DST change.
    start = local_after - timedelta(days=1)
    end = local_after + HORIZON + timedelta(days=1)
    frame = _Frame.around(rule, start, end)
    previous: datetime | None = None
    for count, shifted in enumerate(_walk(frame.rule)):
        local = shifted - frame.shift
        if count > _MAX_SCAN or local > end:
            return
        if local < start:
            continue
        instant = resolve_wall_time(local, tz)
        if instant == previous:
            continue  # two wall times of one gap can shift onto the same instant
        previous = instant
        if instant - after > HORIZON:
            return
        if instant > after or (inclusive and instant == after):
            yield instant


def _walk(rule: rrule) -> Iterator[datetime]:
    """The rule's wall times; dateutil finds some combinations of INTERVAL and BY parts empty only while walking."""
    try:
        yield from rule
    except (ValueError, OverflowError) as exc:
        raise RecurrenceError(f"the rule can never fire ({exc})") from None


def next_occurrence(rule: rrule, tz: ZoneInfo, after: datetime, *, inclusive: bool = False) -> datetime | None:
    """The first occurrence after `after` (or at it), or None when there is none within HORIZON."""
    return next(occurrences(rule, tz, after, inclusive=inclusive), None)


def upcoming(rule: rrule | None, tz: ZoneInfo, first: datetime, count: int) -> list[datetime]:
    """`first` and the occurrences after it, up to `count`."""
    if rule is None:
        return [first]
    found = [first]
    for instant in occurrences(rule, tz, first):
        if len(found) >= count:
            break
        found.append(instant)
    return found


@dataclass(frozen=True)
class _Frame:
    """The rule as dateutil walks it: started at a later step, and `shift` later on an identical calendar."""

    rule: rrule
    shift: timedelta

    @classmethod
    def around(cls, rule: rrule, start: datetime, end: datetime) -> _Frame:
        """A frame for the occurrences from `start` to `end` (naive wall times)."""
        rule = _from_step_before(rule, start)
        parts = _Parts.of(rule)
        dtstart, until = parts.dtstart, parts.until
        years = _twin_years(dtstart.year, end.year)
        if not years:
            return cls(rule, timedelta(0))
        shift = datetime(dtstart.year + years, 1, 1) - datetime(dtstart.year, 1, 1)
        return cls(
            rule.replace(dtstart=dtstart + shift, until=None if until is None or until > end else until + shift),
            shift,
        )


def _from_step_before(rule: rrule, start: datetime) -> rrule:
    """The same rule started at its last whole step (INTERVAL periods) at or before `start`: the occurrences from
    `start` on are the same, and dateutil need not walk the years before it. Only for frequencies whose period has
    a fixed length, and not with COUNT, which counts from the first time."""
    parts = _Parts.of(rule)
    unit = _STEPS.get(parts.freq)
    if unit is None or parts.count is not None or parts.dtstart >= start:
        return rule
    step = unit * parts.interval
    return rule.replace(dtstart=parts.dtstart + (start - parts.dtstart) // step * step)


@dataclass(frozen=True)
class _Parts:
    """The parts of a parsed rule the search needs. dateutil keeps them private, and its stubs do not declare them."""

    freq: int
    interval: int
    count: int | None
    dtstart: datetime
    until: datetime | None

    @classmethod
    def of(cls, rule: rrule) -> _Parts:
        private = rule._freq, rule._interval, rule._count, rule._dtstart, rule._until  # type: ignore[attr-defined]  # noqa: SLF001
        return cls(*private)


@functools.lru_cache(maxsize=512)
def _twin_years(first: int, last: int) -> int:
    """The largest number of years that moves the years `first`..`last` onto years with the same calendars, as
    close to the end of dateutil's calendar (MAXYEAR) as can be; 0 when there are none.

    Years with the same leap day and the same weekday on 1 January have identical dates: every day keeps its
    weekday, day of the year and week number, so a rule has the same occurrences there, moved by whole days. The
    year on either side is matched too (week numbers look at them).
    """
    kinds = _year_kinds()
    wanted = kinds[first - 1 : last + 2]
    for years in range(MAXYEAR - last - 1, 0, -1):
        if kinds[first - 1 + years : last + 2 + years] == wanted:
            return years
    return 0


@functools.cache
def _year_kinds() -> tuple[tuple[bool, int], ...]:
    """(leap year, weekday of 1 January) of every year, indexed by the year (0 is a placeholder)."""
    return ((False, -1), *((calendar.isleap(year), date(year, 1, 1).weekday()) for year in range(1, MAXYEAR + 1)))


def quiet_until(instant: datetime, tz: ZoneInfo, start: time, end: time) -> datetime | None:
    """The end of the quiet hours `instant` falls into (on the member's wall clock), or None when it is outside.

    Quiet hours may span midnight (22:00–07:00). Their end is resolved like any wall time (gap → forward).
    """
    local = wall_time(instant, tz)
    now = local.time()
    if start < end:
        inside = start <= now < end
        end_day = local.date()
    else:
        inside = now >= start or now < end
        end_day = local.date() + timedelta(days=1) if now >= start else local.date()
    if not inside:
        return None
    return resolve_wall_time(datetime.combine(end_day, end), tz)
