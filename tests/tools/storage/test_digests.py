"""Digest occurrences: local times in the household's timezone, across daylight saving, once per period."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest

from tools.storage.digests import Schedule, latest_occurrence

LONG_AGO = datetime(2000, 1, 1, tzinfo=UTC)


def schedule(kind: str, timezone: str, at: time, *, day: int = 1, weekday: int = 1, **extra: object) -> Schedule:
    return Schedule(1, kind, timezone, day, weekday, at, extra.pop("since", LONG_AGO), **extra)  # type: ignore[arg-type]


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def test_monthly_covers_the_previous_month_from_its_local_due_time() -> None:
    berlin = schedule("monthly", "Europe/Berlin", time(8))
    assert latest_occurrence(berlin, utc(2025, 3, 1, 6, 59)) is None  # 07:59 in Berlin
    found = latest_occurrence(berlin, utc(2025, 3, 1, 7, 0))
    assert found is not None
    assert (found.period_start, found.period_end, found.due_at) == (
        date(2025, 2, 1),
        date(2025, 3, 1),
        utc(2025, 3, 1, 7),
    )
    # Still due a day later (a worker was down), no longer after the grace period.
    assert latest_occurrence(berlin, utc(2025, 3, 2, 7)) == found
    assert latest_occurrence(berlin, utc(2025, 3, 5, 7)) is None


def test_january_reports_december_of_the_previous_year() -> None:
    found = latest_occurrence(schedule("monthly", "UTC", time(8), day=3), utc(2025, 1, 3, 9))
    assert found is not None and (found.period_start, found.period_end) == (date(2024, 12, 1), date(2025, 1, 1))


def test_the_same_local_time_across_both_daylight_saving_switches() -> None:
    morning = schedule("morning", "Europe/Berlin", time(7))
    before, after = latest_occurrence(morning, utc(2025, 3, 29, 6)), latest_occurrence(morning, utc(2025, 3, 30, 5))
    assert before is not None and before.due_at == utc(2025, 3, 29, 6)  # CET: UTC+1
    assert after is not None and after.due_at == utc(2025, 3, 30, 5)  # CEST: UTC+2
    autumn = latest_occurrence(morning, utc(2025, 10, 26, 6))
    assert autumn is not None and autumn.due_at == utc(2025, 10, 26, 6)  # back to UTC+1


def test_a_time_in_the_spring_gap_fires_an_hour_later_and_a_doubled_time_fires_first() -> None:
    gap = latest_occurrence(schedule("morning", "Europe/Berlin", time(2, 30)), utc(2025, 3, 30, 3))
    assert gap is not None and gap.due_at == utc(2025, 3, 30, 1, 30)  # 03:30 CEST
    fold = latest_occurrence(schedule("morning", "Europe/Berlin", time(2, 30)), utc(2025, 10, 26, 1))
    assert fold is not None and fold.due_at == utc(2025, 10, 26, 0, 30)  # the first 02:30, still CEST


@pytest.mark.parametrize(
    ("timezone", "due_utc"),
    [("Asia/Shanghai", utc(2025, 6, 9, 23)), ("America/New_York", utc(2025, 6, 10, 11)), ("UTC", utc(2025, 6, 10, 7))],
)
def test_morning_agenda_in_each_timezone(timezone: str, due_utc: datetime) -> None:
    morning = schedule("morning", timezone, time(7))
    assert latest_occurrence(morning, due_utc - timedelta(minutes=1)) is None  # and yesterday's is stale
    found = latest_occurrence(morning, due_utc)
    assert found is not None and found.period_start == date(2025, 6, 10) and found.due_at == due_utc


def test_weekly_covers_the_seven_days_before_its_weekday() -> None:
    friday_evening = schedule("weekly", "America/New_York", time(18), weekday=5)
    found = latest_occurrence(friday_evening, utc(2025, 6, 13, 22, 30))  # Friday 18:30 in New York
    assert found is not None and (found.period_start, found.period_end) == (date(2025, 6, 6), date(2025, 6, 13))
    assert latest_occurrence(friday_evening, utc(2025, 6, 13, 21, 59)) is None  # 17:59, and last week's is stale


def test_nothing_before_the_schedule_was_chosen_or_after_it_was_sent() -> None:
    since = schedule("monthly", "UTC", time(8), since=utc(2025, 3, 1, 9))
    assert latest_occurrence(since, utc(2025, 3, 1, 10)) is None
    sent = schedule("monthly", "UTC", time(8), last_period=date(2025, 2, 1))
    assert latest_occurrence(sent, utc(2025, 3, 1, 10)) is None
    assert latest_occurrence(schedule("monthly", "UTC", time(8), last_period=date(2025, 1, 1)), utc(2025, 3, 1, 10))
