"""Moments, durations and repetitions resolved on the member's clock: Monday 2026-11-23 10:00 in Berlin."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from engine.grounding import ground
from engine.grounding.moments import find_minutes, find_moments

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 11, 23, 10, 0, tzinfo=BERLIN)


@pytest.mark.parametrize(
    ("text", "at", "has_time"),
    [
        ("Remind me tomorrow at 8 am to call the dentist", "2026-11-24T08:00", True),
        ("Remind Ben on Thursday evening at 7 to put the bins out", "2026-11-26T19:00", True),
        ("in 2 hours", "2026-11-23T12:00", True),
        ("In one hour remind me to take the cake out", "2026-11-23T11:00", True),
        ("remind me at 9 pm today", "2026-11-23T21:00", True),
        ("at 7:30 please", "2026-11-24T07:30", True),  # 7:30 has passed today
        ("yesterday we had dinner out", "2026-11-22T09:00", False),
        ("the pizzeria dinner was yesterday, not today", "2026-11-22T09:00", False),
        ("das Essen war gestern, nicht heute", "2026-11-22T09:00", False),
        ("last Friday I paid the plumber", "2026-11-20T09:00", False),
        ("got a parking ticket on friday", "2026-11-20T09:00", False),  # what happened: the Friday that was
        ("mias got a birthday party saturday at 2", "2026-11-28T14:00", True),  # an occasion she has got: coming
        ("ben's got his first match on sunday at 10", "2026-11-29T10:00", True),
        ("明天早上八点提醒我给牙医打电话", "2026-11-24T08:00", True),
        ("下午四点半提醒我去接孩子", "2026-11-23T16:30", True),
        ("后天提醒我交电费", "2026-11-25T09:00", False),
        ("周六上午十点提醒Ben去修车", "2026-11-28T10:00", True),
        ("两小时后提醒我", "2026-11-23T12:00", True),
        ("校车现在早上7点40到", "2026-11-24T07:40", True),  # "现在" (these days) is no moment of its own
        ("女儿晚上8点38度5", "2026-11-23T20:00", True),  # a fever after the hour, not its minutes
        ("remind me in 20 to take the cake out", "2026-11-23T10:20", True),  # "in 20" before what to do: minutes
        ("erinnere mich morgen um 9 an den Zahnarzt", "2026-11-24T09:00", True),
        # a weekday said just before a date only names the date
        ("elternsprechtag ist am mittwoch den 2.12. um viertel nach 4", "2026-12-02T16:15", True),
        ("parents evening is on wednesday 2nd december at 4:15pm", "2026-12-02T16:15", True),
        ("party on sat the 5th at 3", "2026-12-05T15:00", True),
        ("kindergeburtstag am samstag, 5.12. um 15 uhr", "2026-12-05T15:00", True),  # with a comma between
        ("party on saturday, dec 5th at 3pm", "2026-12-05T15:00", True),
        # the day named, a week on
        ("samstag in einer woche ist lenas kindergeburtstag um 15 uhr", "2026-12-05T15:00", True),
        ("saturday week is lenas party at 3", "2026-12-05T15:00", True),
        ("a week tomorrow at 10", "2026-12-01T10:00", True),
        # an hour said roughly, or right after its part of the day
        ("sunday morning 9ish remind me to call my sister", "2026-11-29T09:00", True),
        ("remind me at 9ish to call the garage", "2026-11-24T09:00", True),
    ],
)
def test_moments(text: str, at: str, has_time: bool) -> None:
    [moment] = find_moments(text, NOW, BERLIN)
    assert (moment.at.isoformat(timespec="minutes"), moment.has_time) == (at, has_time)


@pytest.mark.parametrize(
    "text",
    [
        "took 2 pills",
        "room 305",
        "My salary came in, 3200 euros",
        "she is 104 cm",
        "change the amount to 12",  # nothing moved: "to 12" is no time
        "圣诞装饰放在阁楼行李箱后面了",  # a festival's name before its things names the things, not a day
        "春节礼物买好了",
        "现在告诉我家里wifi密码",  # "now" names no moment
        "we live in 12 to 14",
    ],
)
def test_numbers_are_not_moments(text: str) -> None:
    assert find_moments(text, NOW, BERLIN) == []


def test_in_two_hours_is_real_time_across_a_clock_change() -> None:
    before_change = datetime(2026, 10, 25, 1, 30, tzinfo=BERLIN)  # clocks go back at 03:00 that night
    [moment] = find_moments("in 2 hours", before_change, BERLIN)
    assert moment.at.isoformat(timespec="minutes") == "2026-10-25T02:30"  # 01:30 CEST + 2 h = 02:30 CET


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("snooze 30 minutes", [30]),
        ("2 Stunden später", [120]),
        ("半小时后再提醒", [30]),
        ("give me an hour", [60]),
        ("zwei stunden vorm flug melden", [120]),  # number words
        ("sag lena ne stunde vorm training bescheid", [60]),
        ("in twenty minutes", [20]),
    ],
)
def test_durations(text: str, minutes: list[int]) -> None:
    assert find_minutes(text) == minutes


@pytest.mark.parametrize(
    ("text", "rrule", "first"),
    [
        ("every Monday at 7:30 remind me to put out the bins", "FREQ=WEEKLY;BYDAY=MO", "2026-11-30T07:30"),
        ("remind me the 1st of every month to pay rent", "FREQ=MONTHLY;BYMONTHDAY=1", "2026-12-01T09:00"),
        ("every day at 8am vitamins", "FREQ=DAILY", "2026-11-24T08:00"),
        ("every weekday at 7 wake the kids", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "2026-11-24T07:00"),
        ("每周三晚上八点提醒我倒垃圾", "FREQ=WEEKLY;BYDAY=WE", "2026-11-25T20:00"),
        ("每天早上七点吃药", "FREQ=DAILY", "2026-11-24T07:00"),
        ("每月1号交房租", "FREQ=MONTHLY;BYMONTHDAY=1", "2026-12-01T09:00"),
        ("jeden Montag um 7:30 Müll rausbringen", "FREQ=WEEKLY;BYDAY=MO", "2026-11-30T07:30"),
    ],
)
def test_repetitions(text: str, rrule: str, first: str) -> None:
    [repeat] = ground(text, NOW, "Europe/Berlin", []).repeats
    assert (repeat.rrule, repeat.first.isoformat(timespec="minutes")) == (rrule, first)


def test_grounding_names_members_and_periods_and_round_trips_as_json() -> None:
    grounding = ground("How much did Ben spend on groceries last month?", NOW, "Europe/Berlin", ["Anna", "Ben"])
    assert grounding.people == ("Ben",)
    assert grounding.period == "last_month"
    assert grounding.language == "en"
    assert type(grounding).from_json(grounding.to_json()) == grounding


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("明天早上七点提醒Ben带伞", ("Ben",)),  # a Latin name between Chinese characters
        ("那Mia呢", ("Mia",)),
        ("mia's shoes", ("Mia",)),
        ("flights to miami", ()),  # a word that starts with a name names nobody
        ("小明的生日", ("小明",)),
    ],
)
def test_grounding_names_a_member_as_a_word_of_its_own(text: str, named: tuple[str, ...]) -> None:
    assert ground(text, NOW, "Europe/Berlin", ["Ben", "Mia", "小明"]).people == named


@pytest.mark.parametrize(
    ("text", "language"),
    [("wie viel haben wir für Lebensmittel ausgegeben?", "de"), ("这个月花了多少", "zh"), ("how much?", "en")],
)
def test_language(text: str, language: str) -> None:
    assert ground(text, NOW, "Europe/Berlin", []).language == language


@pytest.mark.parametrize(
    ("text", "at"),
    [
        ("remind everyone on saturday at 10 that the cleaner is coming", "2026-11-28T10:00"),  # not "end of year"
        ("erinner Ben heute um 18 Uhr, die Spülmaschine auszuräumen", "2026-11-23T18:00"),  # "die" is no Dienstag
        ("snooze it till 3pm", "2026-11-23T15:00"),
        ("Remind Ben on Friday evening to take out the trash", "2026-11-27T19:00"),
        ("tomorrow morning call mom", "2026-11-24T08:00"),
        ("at 5 pick up Lea", "2026-11-23T17:00"),  # a bare hour from 1 to 6 is the afternoon
        ("push the plumber thing to 4", "2026-11-23T16:00"),  # moved to a bare hour
        ("verschieb das auf 4", "2026-11-23T16:00"),
        ("mia has a playdate at lilys on saturday 2 till 5", "2026-11-28T14:00"),  # a span of hours: its start
        ("der klempner kommt morgen zwischen 8 und 10", "2026-11-24T08:00"),
        ("remind me tomorrow morning at like 7 to take the recycling out", "2026-11-24T07:00"),
        ("saturday evening 2 kids sleep over", "2026-11-28T19:00"),  # a count after the part of the day: no hour
    ],
)
def test_moments_around_look_alikes_and_parts_of_the_day(text: str, at: str) -> None:
    [moment] = ground(text, NOW, "Europe/Berlin", ["Anna", "Ben"]).moments
    assert moment.at.isoformat(timespec="minutes") == at


def test_a_word_that_only_looks_like_a_day_is_no_moment() -> None:
    assert ground("Ben spent some money at the pharmacy", NOW, "Europe/Berlin", []).moments == ()
    assert ground("My salary came in", NOW, "Europe/Berlin", []).moments == ()
