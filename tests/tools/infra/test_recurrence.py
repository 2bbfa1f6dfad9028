"""Wall-clock time: DST gaps shift forward, folds take the first, recurrences keep their local time."""

from __future__ import annotations

from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo

import pytest

from tools.errors import RecurrenceError
from tools.infra.recurrence import (
    is_wall_time_real,
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
