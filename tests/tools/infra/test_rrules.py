"""RRULE parts are checked before dateutil sees them: each refusal names what to fix."""

from __future__ import annotations

from datetime import datetime

import pytest

from tools.errors import RecurrenceError
from tools.infra.rrules import check_rule

MONDAY_9 = datetime(2026, 1, 5, 9)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("FREQ=HOURLY;BYHOUR=25", "BYHOUR takes values 0..23, not 25"),  # was a TypeError inside dateutil
        ("FREQ=MINUTELY;INTERVAL=15;BYMONTH=2;BYMONTHDAY=30", "never falls in February"),  # was a scan to 9999
        ("FREQ=DAILY;BYMONTH=4,6;BYMONTHDAY=31", "no date has BYMONTH=4,6 and BYMONTHDAY=31"),
        ("FREQ=YEARLY;BYMONTH=2", None),  # fine from a 5 January (the 5th of February)
        ("FREQ=DAILY;BYYEARDAY=367", "BYYEARDAY takes values 1..366 or -366..-1"),
        ("FREQ=MONTHLY;BYMONTHDAY=0", "BYMONTHDAY takes values 1..31"),
        ("FREQ=YEARLY;BYYEARDAY=60;BYMONTH=6", "the rule can never fire"),
        ("FREQ=YEARLY;BYWEEKNO=1;BYMONTH=6", "no week of BYWEEKNO=1 has a day in BYMONTH=6"),
        ("FREQ=YEARLY;BYWEEKNO=1;BYMONTH=12", None),  # week 1 can start on 29 December
        ("FREQ=DAILY;FREQ=WEEKLY", "FREQ appears twice"),
        ("FREQ=DAILY;BYEASTER=0", "BYEASTER is not a part a reminder can use"),
        ("FREQ=DAILY;BYSECOND=5", "leave BYSECOND out"),
        ("FREQ=DAILY;COUNT=3;UNTIL=20270101", "COUNT or UNTIL, not both"),  # dateutil warns, tests make it fail
        ("FREQ=DAILY;COUNT=5000", "COUNT takes 1..1000"),
        ("FREQ=DAILY;UNTIL=99991231", "UNTIL takes a year from 1900 to 2200"),
        ("FREQ=DAILY;UNTIL=2027-01-01", "is not a date like 20261231"),
        ("FREQ=YEARLY;INTERVAL=11", "INTERVAL with FREQ=YEARLY takes 1..10"),
        ("FREQ=MINUTELY;INTERVAL=5", "at most every 15 minutes"),
        ("FREQ=HOURLY;BYMINUTE=0,10", "15 minutes apart"),
        ("FREQ=HOURLY;BYMINUTE=0,15,30,45", None),
        ("FREQ=HOURLY;BYMINUTE=55,5", "15 minutes apart"),  # across the hour
        ("FREQ=WEEKLY;BYDAY=1MO", "needs FREQ=MONTHLY or FREQ=YEARLY"),
        ("FREQ=MONTHLY;BYDAY=6MO", "1..5"),
        ("FREQ=YEARLY;BYDAY=-53FR", None),
        ("FREQ=MONTHLY;BYDAY=MONDAY", "BYDAY takes weekdays"),
        ("FREQ=DAILY;BYSETPOS=1", "use it with FREQ=WEEKLY, MONTHLY or YEARLY"),
        ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", None),
        ("FREQ=MONTHLY;BYDAY=MO;BYSETPOS=40", "BYSETPOS with FREQ=MONTHLY takes 1..31"),
        ("FREQ=MONTHLY;BYDAY=MO;BYHOUR=8,9;BYSETPOS=1", "one time of day"),
        ("FREQ=DAILY;WKST=XX", "WKST=XX is not a weekday"),
        ("FREQ=DAILY;BYHOUR=9999999", "is not a whole number"),
        ("BYDAY=MO", "needs FREQ"),
        ("FREQ=DAILY;INTERVAL", "is not NAME=VALUE"),
        ("RRULE:freq=weekly;byday=mo", None),
    ],
)
def test_rule_parts_are_checked_with_a_message_for_the_model(rule: str, message: str | None) -> None:
    if message is None:
        check_rule(rule, MONDAY_9)
        return
    with pytest.raises(RecurrenceError) as caught:
        check_rule(rule, MONDAY_9)
    assert message in str(caught.value)


def test_the_day_of_the_first_time_counts_when_no_day_is_given() -> None:
    # dateutil repeats a YEARLY or MONTHLY rule without a BY day on the day of DTSTART: the 30th has no February.
    with pytest.raises(RecurrenceError, match="the day 30 comes from the first time"):
        check_rule("FREQ=YEARLY;BYMONTH=2", datetime(2026, 1, 30, 9))
    check_rule("FREQ=MONTHLY", datetime(2026, 1, 31, 9))  # months with a 31st exist


def test_a_checked_rule_keeps_its_parts_in_order_and_upper_case() -> None:
    assert check_rule("rrule:freq=monthly;bymonthday=-1;", MONDAY_9).text() == "FREQ=MONTHLY;BYMONTHDAY=-1"
