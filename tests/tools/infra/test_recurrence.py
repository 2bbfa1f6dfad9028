"""Wall-clock time: DST gaps shift forward, folds take the first, recurrences keep their local time."""

from __future__ import annotations

import random
import time as time_module
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from dateutil.rrule import rrule

from tools.errors import RecurrenceError
from tools.infra.recurrence import (
    HORIZON,
    is_wall_time_real,
    next_occurrence,
    parse_rule,
    quiet_until,
    resolve_wall_time,
    upcoming,
)

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
SHANGHAI = ZoneInfo("Asia/Shanghai")


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


def series(rule: str, start: datetime, tz: ZoneInfo, count: int) -> list[datetime]:
    return upcoming(parse_rule(rule, start, tz), tz, resolve_wall_time(start, tz), count)


def test_a_wall_time_in_the_spring_gap_moves_forward_by_the_gap() -> None:
    assert not is_wall_time_real(datetime(2025, 3, 30, 2, 30), BERLIN)
    assert resolve_wall_time(datetime(2025, 3, 30, 2, 30), BERLIN) == utc(2025, 3, 30, 1, 30)  # 03:30 CEST
    assert resolve_wall_time(datetime(2025, 3, 9, 2, 15), NEW_YORK) == utc(2025, 3, 9, 7, 15)  # 03:15 EDT


def test_an_ambiguous_wall_time_in_the_autumn_fold_is_the_first_one() -> None:
    assert is_wall_time_real(datetime(2025, 10, 26, 2, 30), BERLIN)
    assert resolve_wall_time(datetime(2025, 10, 26, 2, 30), BERLIN) == utc(2025, 10, 26, 0, 30)  # still CEST
    assert resolve_wall_time(datetime(2025, 11, 2, 1, 30), NEW_YORK) == utc(2025, 11, 2, 5, 30)  # still EDT


def test_daily_reminder_keeps_its_local_time_across_both_berlin_switches() -> None:
    spring = series("FREQ=DAILY", datetime(2025, 3, 29, 7, 30), BERLIN, 3)
    autumn = series("FREQ=DAILY", datetime(2025, 10, 25, 7, 30), BERLIN, 3)
    assert spring == [utc(2025, 3, 29, 6, 30), utc(2025, 3, 30, 5, 30), utc(2025, 3, 31, 5, 30)]
    assert autumn == [utc(2025, 10, 25, 5, 30), utc(2025, 10, 26, 6, 30), utc(2025, 10, 27, 6, 30)]
    assert {t.astimezone(BERLIN).strftime("%H:%M") for t in spring + autumn} == {"07:30"}


def test_weekly_reminder_at_a_gap_and_a_fold_time() -> None:
    spring = series("FREQ=WEEKLY;BYDAY=SU", datetime(2025, 3, 23, 2, 30), BERLIN, 3)
    autumn = series("FREQ=WEEKLY;BYDAY=SU", datetime(2025, 10, 19, 2, 30), BERLIN, 3)
    assert spring == [utc(2025, 3, 23, 1, 30), utc(2025, 3, 30, 1, 30), utc(2025, 4, 6, 0, 30)]
    assert autumn == [utc(2025, 10, 19, 0, 30), utc(2025, 10, 26, 0, 30), utc(2025, 11, 2, 1, 30)]


def test_new_york_and_shanghai() -> None:
    assert series("FREQ=DAILY", datetime(2025, 3, 8, 9, 0), NEW_YORK, 3) == [
        utc(2025, 3, 8, 14),
        utc(2025, 3, 9, 13),
        utc(2025, 3, 10, 13),
    ]
    # No DST in Shanghai: the 1st of each month at 08:00 is always 00:00 UTC.
    assert series("FREQ=MONTHLY;BYMONTHDAY=1", datetime(2025, 3, 1, 8, 0), SHANGHAI, 3) == [
        utc(2025, 3, 1),
        utc(2025, 4, 1),
        utc(2025, 5, 1),
    ]


def test_until_in_utc_is_read_on_the_local_clock_and_ends_the_series() -> None:
    got = series("RRULE:FREQ=DAILY;UNTIL=20251026T235959Z", datetime(2025, 10, 25, 7, 30), BERLIN, 5)
    assert got == [utc(2025, 10, 25, 5, 30), utc(2025, 10, 26, 6, 30)]


@pytest.mark.parametrize(
    "rule",
    [
        "every monday",
        "FREQ=FORTNIGHTLY",
        "FREQ=SECONDLY",
        "FREQ=MINUTELY;INTERVAL=5",
        "DTSTART:20250101T090000\nRRULE:FREQ=DAILY",
        "",
    ],
)
def test_unusable_rules_are_refused_with_a_reason(rule: str) -> None:
    with pytest.raises(RecurrenceError):
        parse_rule(rule, datetime(2025, 1, 1, 9), BERLIN)


def test_quiet_hours_over_midnight_hold_delivery_until_they_end() -> None:
    quiet = (time(22), time(7))
    assert quiet_until(utc(2025, 1, 10, 22, 30), BERLIN, *quiet) == utc(2025, 1, 11, 6)  # 23:30 → 07:00 next day
    assert quiet_until(utc(2025, 1, 11, 4, 0), BERLIN, *quiet) == utc(2025, 1, 11, 6)  # 05:00 → 07:00
    assert quiet_until(utc(2025, 1, 11, 11, 0), BERLIN, *quiet) is None  # noon is not quiet
    assert quiet_until(utc(2025, 1, 11, 12, 30), BERLIN, time(13), time(15)) == utc(2025, 1, 11, 14)


def test_quiet_hours_ending_in_a_dst_gap_end_after_it() -> None:
    # Quiet until 02:30, which does not exist on 2025-03-30: delivery at 03:30 CEST.
    assert quiet_until(utc(2025, 3, 29, 23, 0), BERLIN, time(23), time(2, 30)) == utc(2025, 3, 30, 1, 30)


NEVER_FIRING = [
    "FREQ=MINUTELY;INTERVAL=15;BYMONTH=2;BYMONTHDAY=30",  # refused at once: no such day
    "FREQ=DAILY;INTERVAL=7;BYDAY=TU",  # from a Monday: only ever Mondays
    "FREQ=MONTHLY;INTERVAL=2;BYMONTH=2",  # from January: only odd months
    "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29",  # from 2026: never a leap year
    "FREQ=MINUTELY;INTERVAL=15;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO",  # next in 2044: past the horizon
    "FREQ=HOURLY;BYWEEKNO=1;BYYEARDAY=100",  # week 1 never holds the 100th day
    "FREQ=MONTHLY;BYDAY=MO;BYSETPOS=6",
]


@pytest.mark.parametrize("rule", NEVER_FIRING)
def test_a_rule_that_never_fires_is_settled_without_walking_to_the_year_9999(rule: str) -> None:
    # It took 7-16 s on the event loop; now the walk stops soon after the horizon (a bound, not a benchmark).
    started = time_module.perf_counter()
    try:
        found = next_occurrence(parse_rule(rule, datetime(2026, 1, 5, 9), BERLIN), BERLIN, utc(2026, 1, 5, 7))
    except RecurrenceError:
        found = None
    assert found is None
    assert time_module.perf_counter() - started < 1.0


def test_the_next_time_must_fall_within_the_horizon() -> None:
    leap_monday = parse_rule("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", datetime(2026, 1, 5, 9), BERLIN)
    assert next_occurrence(leap_monday, BERLIN, utc(2026, 1, 5)) is None  # 2044-02-29 is 18 years away
    assert next_occurrence(leap_monday, BERLIN, utc(2036, 1, 5)) == utc(2044, 2, 29, 8)
    assert HORIZON >= timedelta(days=3652)


def _full_walk(rule: rrule, tz: ZoneInfo, after: datetime, count: int) -> list[datetime]:
    """The occurrences as dateutil alone finds them, walking from the rule's first time."""
    found: list[datetime] = []
    for local in rule:
        instant = resolve_wall_time(local, tz)
        if instant > after and (not found or instant != found[-1]):
            found.append(instant)
        if len(found) == count or instant - after > HORIZON:
            break
    return [instant for instant in found if instant - after <= HORIZON]


def _live_rule(rnd: random.Random) -> str:
    """A rule that fires often enough for a full walk to be quick."""
    freq = rnd.choice(["YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY"])
    parts = [f"FREQ={freq}"]
    interval = rnd.choice([1, 1, 2, 3, 7]) if freq != "MINUTELY" else rnd.choice([15, 20, 45, 90])
    parts.append(f"INTERVAL={interval}")
    if rnd.random() < 0.5 and freq in ("WEEKLY", "DAILY", "HOURLY", "MINUTELY"):
        parts.append("BYDAY=" + ",".join(rnd.sample(["MO", "TU", "WE", "TH", "FR", "SA", "SU"], rnd.randint(2, 5))))
    if freq == "MONTHLY" and rnd.random() < 0.5:
        parts.append(f"BYMONTHDAY={rnd.choice([1, 15, 28, -1])}")
    if freq in ("DAILY", "WEEKLY") and rnd.random() < 0.5:
        parts.append(f"BYHOUR={rnd.randint(0, 23)};BYMINUTE={rnd.choice([0, 30, 45])}")
    if rnd.random() < 0.2:
        parts.append(f"COUNT={rnd.randint(5, 300)}")
    return ";".join(parts)


def test_the_bounded_search_finds_what_a_full_walk_finds() -> None:
    """Starting the walk at a later step and on a calendar thousands of years on changes no occurrence."""
    rnd = random.Random(5545)
    zones = [BERLIN, NEW_YORK, SHANGHAI, ZoneInfo("Australia/Lord_Howe"), ZoneInfo("UTC")]
    for _ in range(150):
        text, tz = _live_rule(rnd), rnd.choice(zones)
        start = datetime(2026, 1, 1, 0) + timedelta(days=rnd.randint(0, 15_000), minutes=rnd.randint(0, 1439))
        later = [0, 5, 24 * 40] + ([24 * 800] if "FREQ=HOURLY" not in text and "FREQ=MINUTELY" not in text else [])
        after = resolve_wall_time(start, tz) + timedelta(hours=rnd.choice(later))
        rule = parse_rule(text, start, tz)
        assert upcoming(rule, tz, after, 6)[1:] == _full_walk(rule, tz, after, 5), (text, start, after, tz)
