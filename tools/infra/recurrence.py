"""Wall-clock time in an IANA timezone: RFC 5545 recurrences (python-dateutil), DST gaps and folds, quiet hours.

A recurring reminder keeps its wall-clock time ("every Monday at 07:30") in its timezone, whatever the UTC
offset does. Two wall times need a rule, and the rule is the same everywhere in FAA:

- a time that does not exist (the spring-forward gap, e.g. 02:30 in Berlin on the last Sunday of March) is
  shifted forward by the length of the gap: 02:30 → 03:30 the new offset;
- a time that exists twice (the fall-back fold, e.g. 02:30 on the last Sunday of October) means the first of
  the two, the one still on summer time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from dateutil.rrule import MINUTELY, SECONDLY, rrule, rrulestr

from tools.errors import RecurrenceError

_MAX_SCAN = 100_000  # occurrences looked at before a rule is taken to have no more
_MIN_MINUTELY_INTERVAL = 15
_UNTIL_UTC = re.compile(r"UNTIL=(\d{8}T\d{6})Z", re.I)


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
    wall time `dtstart_local`. A UTC `UNTIL` is read as the wall time it shows in `tz`."""
    value = text.strip()
    if value.upper().startswith("RRULE:"):
        value = value[6:].strip()
    if not value or "\n" in value or ":" in value:
        raise RecurrenceError(
            "give one RRULE value such as FREQ=WEEKLY;BYDAY=MO (no DTSTART: the first time goes in `when`)"
        )
    value = _UNTIL_UTC.sub(lambda m: "UNTIL=" + _local_until(m.group(1), tz), value)
    try:
        rule = rrulestr(value, dtstart=dtstart_local)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise RecurrenceError(f"{text!r} is not a valid RFC 5545 RRULE ({exc})") from None
    if not isinstance(rule, rrule):
        raise RecurrenceError("give a single RRULE")
    # dateutil keeps the parsed parts private, so its stubs do not declare them.
    freq = rule._freq  # type: ignore[attr-defined]  # noqa: SLF001
    interval = rule._interval  # type: ignore[attr-defined]  # noqa: SLF001
    if freq == SECONDLY or (freq == MINUTELY and interval < _MIN_MINUTELY_INTERVAL):
        raise RecurrenceError(f"a reminder repeats at most every {_MIN_MINUTELY_INTERVAL} minutes")
    return rule


def _local_until(stamp: str, tz: ZoneInfo) -> str:
    instant = datetime.strptime(stamp, "%Y%m%dT%H%M%S").replace(tzinfo=UTC)
    return wall_time(instant, tz).strftime("%Y%m%dT%H%M%S")


def occurrences(rule: rrule, tz: ZoneInfo, after: datetime, *, inclusive: bool = False) -> Iterator[datetime]:
    """UTC instants of the rule's occurrences after `after` (or at it, with `inclusive`), in order."""
    # Start the scan a day early: the wall time of `after` can be up to a day off its UTC order near a DST change.
    start = wall_time(after, tz) - timedelta(days=1)
    dtstart = rule._dtstart  # type: ignore[attr-defined]  # noqa: SLF001 (private to dateutil, absent from its stubs)
    scan_from = max(start, dtstart) if dtstart is not None else start
    previous: datetime | None = None
    for count, local in enumerate(rule.xafter(scan_from, inc=True)):
        if count > _MAX_SCAN:
            return
        instant = resolve_wall_time(local, tz)
        if instant == previous:
            continue  # two wall times of one gap can shift onto the same instant
        previous = instant
        if instant > after or (inclusive and instant == after):
            yield instant


def next_occurrence(rule: rrule, tz: ZoneInfo, after: datetime, *, inclusive: bool = False) -> datetime | None:
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
