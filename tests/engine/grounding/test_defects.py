"""Regression tests for what the grounding misread in family messages (issue 29), on the member's clock: Monday
2026-11-23 10:00 in Berlin."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import pytest

from engine.grounding import Grounding, ground

NOW = datetime(2026, 11, 23, 10, 0)
ZONE = "Europe/Berlin"


def grounded(text: str, now: datetime = NOW) -> Grounding:
    from zoneinfo import ZoneInfo

    return ground(text, now.replace(tzinfo=ZoneInfo(ZONE)), ZONE, ["Ben", "Mia", "Tom"])


def moments(text: str, now: datetime = NOW) -> list[tuple[str, bool]]:
    return [(m.at.isoformat(timespec="minutes"), m.has_time) for m in grounded(text, now).moments]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("next tuesday at 3:30pm", [("2026-12-01T15:30", True)]),  # pm after the minutes; next week's Tuesday
        ("the day after tomorrow at 8am", [("2026-11-25T08:00", True)]),
        ("in a fortnight at 10am", [("2026-12-07T10:00", True)]),
        ("end of the month", [("2026-11-30T09:00", False)]),
        ("pay the plumber by the end of the month", [("2026-11-30T09:00", False)]),
        ("next friday", [("2026-12-04T09:00", False)]),
        ("this friday", [("2026-11-27T09:00", False)]),
        ("this tuesday at 6pm", [("2026-11-24T18:00", True)]),
        (
            "Kannst du mir morgen um 8 Uhr sagen, dass ich die Mülltonnen rausstellen soll?",
            [("2026-11-24T08:00", True)],
        ),
        ("um 8 Uhr", [("2026-11-24T08:00", True)]),  # 08:00 has passed today
        ("swimming's been moved to half 5 from now on", [("2026-11-23T17:30", True)]),
        ("Elternabend um halb 8 abends", [("2026-11-23T19:30", True)]),  # halb 8 is 7:30
        ("quarter past 4 tomorrow", [("2026-11-24T16:15", True)]),
        ("übermorgen um 17 Uhr", [("2026-11-25T17:00", True)]),
        ("nächsten Dienstag um 15:30", [("2026-12-01T15:30", True)]),
        ("ben's dentist appointment is now at 4:15 instead", [("2026-11-23T16:15", True)]),
        ("push the dentist reminder to friday at 10", [("2026-11-27T10:00", True)]),
        ("remind me tmrw at 7.30pm", [("2026-11-24T19:30", True)]),
        ("in 2 hours", [("2026-11-23T12:00", True)]),
        ("in two weeks", [("2026-12-07T09:00", False)]),
        ("I paid the plumber on Friday", [("2026-11-20T09:00", False)]),  # a sentence about the past
        ("am 3.12. um 18 Uhr", [("2026-12-03T18:00", True)]),
        ("on March 3rd at 5pm", [("2027-03-03T17:00", True)]),
        ("ben's got football at the leisure centre sat 9am", [("2026-11-28T09:00", True)]),  # "sat" before a time
        ("zahnarzt do 16:15", [("2026-11-26T16:15", True)]),
        ("so 9 uhr passt", [("2026-11-24T09:00", True)]),  # "so" is "about", never Sunday
        ("mia hat freitag nachmittag um drei ihre ballettaufführung", [("2026-11-27T15:00", True)]),  # "hat": a plan
        ("mia hat freitag ihr zeugnis abgeholt", [("2026-11-20T09:00", False)]),  # "hat" with a participle: past
        ("过二十分钟提醒我把汤的火关小", [("2026-11-23T10:20", True)]),  # 过 + a duration: from now
        ("xmas dinner at ours on the 25th at 1", [("2026-12-25T13:00", True)]),  # Christmas's 25th, not November's
    ],
)
def test_moments(text: str, expected: list[tuple[str, bool]]) -> None:
    assert moments(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Thanks, that's all for now!",
        "haha thanks mate 👍",
        "lets keep groceries under 400 a month",
        "zwölf Euro für Brötchen",
        "took 2 pills",
        "room 305",
        "Setz Windeln und 3 Gläser Babybrei auf die Einkaufsliste",
        "we need more coffee and toilet paper",
        "Ben spent some money at the pharmacy",
        "Guten Morgen!",
    ],
)
def test_no_moment(text: str) -> None:
    assert moments(text) == []


def test_two_times_in_one_message_are_both_found_in_order() -> None:
    grounding = grounded("the play is on Friday at 17:00, remind me Friday at 16:00")
    assert [(m.key, m.at.isoformat(timespec="minutes")) for m in grounding.moments] == [
        ("t1", "2026-11-27T17:00"),
        ("t2", "2026-11-27T16:00"),
    ]


def test_two_times_without_punctuation_and_a_time_that_takes_the_day_before_it() -> None:
    assert moments("dentist tomorrow at 10 remind me at 8") == [("2026-11-24T10:00", True), ("2026-11-24T08:00", True)]
    assert moments("das Konzert ist am Samstag um 19 Uhr, erinnere mich um 17 Uhr") == [
        ("2026-11-28T19:00", True),
        ("2026-11-28T17:00", True),
    ]


def test_a_time_after_a_day_that_passed_is_the_next_time_the_clock_shows_it() -> None:
    assert moments("I paid the plumber yesterday, remind me at 5 to call him") == [
        ("2026-11-22T09:00", False),
        ("2026-11-23T17:00", True),
    ]


def test_chinese_two_times() -> None:
    assert moments("明天下午三点半开会，周五上午十点提醒我") == [("2026-11-24T15:30", True), ("2026-11-27T10:00", True)]


@pytest.mark.parametrize(
    ("text", "hour"),
    [
        ("weekdays at 7 remind ben to take his lunch", "07:00"),  # 7 to 11: the morning
        ("at 5 pick up Lea", "17:00"),  # 1 to 6: the afternoon
        ("at 6 dinner with grandma", "18:00"),
        ("at 12", "12:00"),
        ("at 7 tonight", "19:00"),
        ("at 9 in the evening", "21:00"),
        ("at 5 in the morning", "05:00"),
        ("um 5 Uhr", "05:00"),  # with Uhr, the 24-hour clock
        ("um 5 Uhr nachmittags", "17:00"),
        ("at 05:30", "05:30"),
        ("at 11am", "11:00"),
        ("at 12am", "00:00"),
        ("Mittagessen um halb 1", "12:30"),
        ("quarter to 1", "12:45"),
        ("weekdays at quarter to 7 remind ben to take his inhaler", "06:45"),  # the hour said, 7, is the morning's
        ("morgen um viertel vor 7 joggen", "06:45"),
        ("morgen um halb 7 joggen", "06:30"),
        ("quarter to 5 pick up Lea", "16:45"),
        ("morgen elternabend um 7", "19:00"),  # what is held in the evening
        ("dinner at the meyers saturday at 8", "20:00"),
        ("breakfast at 8", "08:00"),
    ],
)
def test_the_half_of_the_day_of_a_bare_hour(text: str, hour: str) -> None:
    grounding = grounded(text)
    times = [m.at.strftime("%H:%M") for m in grounding.moments] + [r.first.strftime("%H:%M") for r in grounding.repeats]
    assert times == [hour]


@pytest.mark.parametrize(
    ("text", "rrule", "first"),
    [
        ("remnid me evry other tuesday at 6:30pm to put the paper bin out", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU",
         "2026-11-24T18:30"),
        ("first monday of every month at 9am", "FREQ=MONTHLY;BYDAY=1MO", "2026-12-07T09:00"),
        ("remind me on the last friday of the month to pay the cleaner", "FREQ=MONTHLY;BYDAY=-1FR",
         "2026-11-27T09:00"),
        ("weekdays at 7 remind ben to take his lunch", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "2026-11-24T07:00"),
        ("jeden zweiten Dienstag um 18 Uhr Papiermüll", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", "2026-11-24T18:00"),
        ("am ersten Montag im Monat um 9 Uhr Miete überweisen", "FREQ=MONTHLY;BYDAY=1MO", "2026-12-07T09:00"),
        ("dienstags und donnerstags um 16 Uhr Schwimmen", "FREQ=WEEKLY;BYDAY=TU,TH", "2026-11-24T16:00"),
        ("every monday and wednesday at 8am", "FREQ=WEEKLY;BYDAY=MO,WE", "2026-11-25T08:00"),
        ("every 3 days water the plants", "FREQ=DAILY;INTERVAL=3", "2026-11-26T09:00"),
        ("每个月第一个周一提醒我交水费", "FREQ=MONTHLY;BYDAY=1MO", "2026-12-07T09:00"),
        ("工作日早上七点叫孩子起床", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "2026-11-24T07:00"),
        ("隔周二晚上六点半倒垃圾", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", "2026-11-24T18:30"),
        ("every evening take the pills", "FREQ=DAILY", "2026-11-23T19:00"),
        # a weekday said as a habit, Wednesday's German form and a part of the day written onto it included
        ("der kinderarzt hat mittwochs nachmittags zu", "FREQ=WEEKLY;BYDAY=WE", "2026-11-25T15:00"),
        ("donnerstagabends ist chorprobe", "FREQ=WEEKLY;BYDAY=TH", "2026-11-26T19:00"),
        ("the gp is closed on wednesday afternoons", "FREQ=WEEKLY;BYDAY=WE", "2026-11-25T15:00"),
        # German writes the day's hours: "6:45" is the morning's
        ("werktags um 6:45 erinnere ben ans pausenbrot", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "2026-11-24T06:45"),
        # the part of the day the rule names says the half of an hour said alone
        ("every night at 9 remind ben to brush his teeth", "FREQ=DAILY", "2026-11-23T21:00"),
        ("jeden abend um 9 erinnern, tabletten", "FREQ=DAILY", "2026-11-23T21:00"),
        ("every morning at 7 walk the dog", "FREQ=DAILY", "2026-11-24T07:00"),
        ("every night at 2 check the baby monitor", "FREQ=DAILY", "2026-11-24T02:00"),
    ],
)  # fmt: skip
def test_repetitions(text: str, rrule: str, first: str) -> None:
    [repeat] = grounded(text).repeats
    assert (repeat.rrule, repeat.first.isoformat(timespec="minutes")) == (rrule, first)


@pytest.mark.parametrize(
    ("text", "first", "last", "name"),
    [
        ("how much have we spent on takeaway since the start of the month", "2026-11-01", "2026-11-23", "this_month"),
        ("groceries this month so far", "2026-11-01", "2026-11-23", "this_month"),
        ("groceries this month - whats the damage", "2026-11-01", "2026-11-30", "this_month"),
        ("what did we spend last weekend", "2026-11-21", "2026-11-22", None),
        ("how much did we spend on takeaway over the summer", "2026-06-01", "2026-08-31", None),
        ("how much went on fuel in October", "2026-10-01", "2026-10-31", None),
        ("in December 2025", "2025-12-01", "2025-12-31", None),
        ("Was haben wir seit Monatsanfang ausgegeben?", "2026-11-01", "2026-11-23", "this_month"),
        ("Was haben wir letztes Wochenende ausgegeben?", "2026-11-21", "2026-11-22", None),
        ("上周末花了多少钱", "2026-11-21", "2026-11-22", None),
        ("从月初到现在买菜花了多少", "2026-11-01", "2026-11-23", "this_month"),
        ("自月初至今花了多少", "2026-11-01", "2026-11-23", "this_month"),
        ("今年夏天吃外卖花了多少", "2026-06-01", "2026-08-31", None),
        ("十月份买菜花了多少", "2026-10-01", "2026-10-31", None),
        ("how much this year", "2026-01-01", "2026-12-31", "this_year"),
        ("how much last month", "2026-10-01", "2026-10-31", "last_month"),
        ("wie viel letzte Woche", "2026-11-16", "2026-11-22", "last_week"),
        ("这个月花了多少", "2026-11-01", "2026-11-30", "this_month"),
        ("what do we have planned for the rest of the week", "2026-11-23", "2026-11-29", "this_week"),
        ("spending in the last 30 days", "2026-10-25", "2026-11-23", "last_30_days"),
        ("what did we spend yesterday", "2026-11-22", "2026-11-22", "yesterday"),
        ("since Monday", "2026-11-23", "2026-11-23", None),
        ("since March", "2026-03-01", "2026-11-23", None),
        ("what did we spend in may", "2026-05-01", "2026-05-31", None),
    ],
)
def test_periods_with_exact_bounds(text: str, first: str, last: str, name: str | None) -> None:
    grounding = grounded(text)
    assert grounding.span is not None
    assert (grounding.span.first.isoformat(), grounding.span.last.isoformat(), grounding.span.name) == (
        first,
        last,
        name,
    )
    assert grounding.period == name  # the named period, as before, for callers that use the filter's names
    assert grounding.span.condition() == {"field": "occurred_at", "op": "between", "value": [first, last]}


@pytest.mark.parametrize(
    "text",
    ["wie haben sich die ausgaben in den letzten monaten entwickelt", "was steht in den nächsten Monaten an"],
)
def test_the_last_or_next_months_are_no_single_month(text: str) -> None:
    assert grounded(text).span is None


def test_seasons_are_turned_round_south_of_the_equator() -> None:
    from zoneinfo import ZoneInfo

    now = datetime(2027, 3, 10, 12, 0, tzinfo=ZoneInfo("Australia/Sydney"))
    span = ground("what did we spend over the summer", now, "Australia/Sydney", []).span
    assert span is not None and (span.first, span.last) == (date(2026, 12, 1), date(2027, 2, 28))


def test_a_summer_asked_about_in_march_is_last_years() -> None:
    span = grounded("over the summer", datetime(2027, 3, 10, 12, 0)).span
    assert span is not None and (span.first, span.last) == (date(2026, 6, 1), date(2026, 8, 31))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("zwölf Euro für Brötchen", [("12", "EUR")]),
        ("twenty quid for the window cleaner", [("20", "GBP")]),
        ("window cleaner 45 quid", [("45", "GBP")]),
        ("三十五块五", [("35.5", "CNY")]),
        ("两千块", [("2000", "CNY")]),
        ("zwei Euro fünfzig für einen Kaffee", [("2.50", "EUR")]),
        ("Netflix 13.99 monthly subscription charged today", [("13.99", None)]),
        ("groceries 37.20 at aldi and 4.99 for a magazine", [("37.20", None), ("4.99", None)]),
        ("CHF 1'280 für die Miete", [("1280", "CHF")]),
        ("lets keep groceries under 400 a month", [("400", None)]),
        ("add 20 for the thing", [("20", None)]),
        ("bought 2 coffees for 7.80", [("7.80", None)]),
        ("Habe 150 Euro für das alte Fahrrad bekommen", [("150", "EUR")]),
        ("paid £45 for ben's school trip to london, and remind me friday at 8am", [("45", "GBP")]),
        ("die schuhe haben 49 gekostet nicht 39", [("49", None), ("39", None)]),  # "49 gekostet": no count
    ],
)
def test_money(text: str, expected: list[tuple[str, str | None]]) -> None:
    assert [(m.amount, m.currency) for m in grounded(text).money] == [(Decimal(a), c) for a, c in expected]


@pytest.mark.parametrize(
    "text",
    [
        "Setz Windeln und 3 Gläser Babybrei auf die Einkaufsliste",
        "Ben took 2 pills",
        "we are in room 305",
        "she is 104 cm",
        "it was 24.80, not 42.80",
        "remind me at 7 to pay the bill",
        "the swimming class moved to half 5",
        "we need 3 bin bags and 2 light bulbs",
        "what did we spend in October 2025",
        "am 12.12. um 15 uhr weihnachtsfeier im kindergarten",  # a German date
    ],
)
def test_not_money(text: str) -> None:
    assert grounded(text).money == ()


def test_the_grounding_round_trips_as_json_with_its_new_fields() -> None:
    grounding = grounded("window cleaner 45 quid since the start of the month")
    assert grounding.span is not None and grounding.category == "household"
    assert Grounding.from_json(grounding.to_json()) == grounding
    assert "2026-11-01 to 2026-11-23" in grounding.describe()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The wifi password is sunflower2026", []),  # a number glued to a word
        ("Mia's jacket size is 128", []),  # something one buys, but a whole number with no word of paying
        ("打车花了120", [("120", None)]),
    ],
)
def test_bare_numbers_beside_words_of_things_bought(text: str, expected: list[tuple[str, str | None]]) -> None:
    assert [(m.amount, m.currency) for m in grounded(text).money] == [(Decimal(a), c) for a, c in expected]
