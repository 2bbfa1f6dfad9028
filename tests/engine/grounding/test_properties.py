"""Property tests: for generated weekday, time and amount phrasings in English, German and Chinese, the grounding
finds exactly the moment or amount the phrase was built from. The expected values are computed here from the
phrase's parts, independently of the grammars."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import cn2an
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.grounding import ground

ZONE = "Europe/Berlin"
EN_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
DE_DAYS = ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag")
ITEMS_EN = ("pizza", "groceries", "the cinema", "new shoes", "petrol", "a birthday present")
ITEMS_DE = ("Brötchen", "den Einkauf", "Kinoabend", "neue Schuhe", "Tanken", "ein Geschenk")
ITEMS_ZH = ("买菜", "打车", "看电影", "买衣服", "加油", "买礼物")
DE_UNITS = ("", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun")
DE_TEENS = {10: "zehn", 11: "elf", 12: "zwölf", 13: "dreizehn", 14: "vierzehn", 15: "fünfzehn", 16: "sechzehn",
            17: "siebzehn", 18: "achtzehn", 19: "neunzehn"}  # fmt: skip
DE_TENS = ("", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig")
EN_UNITS = ("", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
EN_TEENS = {10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen", 16: "sixteen",
            17: "seventeen", 18: "eighteen", 19: "nineteen"}  # fmt: skip
EN_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")

# Any moment of a year: the grammars must not depend on which day it is.
nows = st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2027, 12, 31)).map(
    lambda d: d.replace(second=0, microsecond=0, tzinfo=ZoneInfo(ZONE))
)
weekdays = st.integers(0, 6)
hours = st.integers(0, 23)
minutes = st.sampled_from([0, 5, 15, 30, 45, 59])
cents = st.integers(1, 99_999)  # 0.01 … 999.99


def coming(today: date, weekday: int) -> date:
    return today + timedelta(days=(weekday - today.weekday()) % 7)


def next_weeks(today: date, weekday: int) -> date:
    return today - timedelta(days=today.weekday()) + timedelta(days=7 + weekday)


def twelve_hour(hour: int) -> str:
    return f"{hour % 12 or 12}{'pm' if hour >= 12 else 'am'}"


def found(text: str, now: datetime) -> list[datetime]:
    return [m.at for m in ground(text, now, ZONE, []).moments]


def at(day: date, hour: int, minute: int) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute)


@settings(max_examples=150, deadline=None)
@given(now=nows, weekday=weekdays, hour=hours, minute=minutes, next_week=st.booleans(), verb=st.sampled_from(
    ["remind me", "dentist", "the play is", "pick up Ben"]))  # fmt: skip
def test_english_weekday_and_time(
    now: datetime, weekday: int, hour: int, minute: int, next_week: bool, verb: str
) -> None:
    clock = twelve_hour(hour).replace("am", f":{minute:02d}am").replace("pm", f":{minute:02d}pm")
    text = f"{verb} {'next' if next_week else 'on'} {EN_DAYS[weekday]} at {clock}"
    today = now.date()
    day = next_weeks(today, weekday) if next_week else coming(today, weekday)
    expected = at(day, hour, minute)
    if not next_week and expected <= now.replace(tzinfo=None):
        expected += timedelta(days=7)
    assert found(text, now) == [expected], text


@settings(max_examples=150, deadline=None)
@given(now=nows, weekday=weekdays, hour=hours, minute=minutes, next_week=st.booleans())
def test_german_weekday_and_time(now: datetime, weekday: int, hour: int, minute: int, next_week: bool) -> None:
    text = f"{'nächsten' if next_week else 'am'} {DE_DAYS[weekday]} um {hour}:{minute:02d} Uhr Zahnarzt"
    today = now.date()
    day = next_weeks(today, weekday) if next_week else coming(today, weekday)
    expected = at(day, hour, minute)
    if not next_week and expected <= now.replace(tzinfo=None):
        expected += timedelta(days=7)
    assert found(text, now) == [expected], text


@settings(max_examples=100, deadline=None)
@given(now=nows, days=st.sampled_from([1, 2]), hour=st.integers(1, 11), half=st.booleans(), pm=st.booleans())
def test_chinese_day_and_time(now: datetime, days: int, hour: int, half: bool, pm: bool) -> None:
    text = (
        f"{'明天' if days == 1 else '后天'}{'下午' if pm else '上午'}{cn2an.an2cn(hour)}点{'半' if half else ''}提醒我"
    )
    expected = at(now.date() + timedelta(days=days), hour + (12 if pm else 0), 30 if half else 0)
    assert found(text, now) == [expected], text


@settings(max_examples=100, deadline=None)
@given(now=nows, first=st.tuples(weekdays, st.integers(13, 20)), second=st.tuples(weekdays, st.integers(7, 12)))
def test_two_moments_in_one_message(now: datetime, first: tuple[int, int], second: tuple[int, int]) -> None:
    text = f"the play is on {EN_DAYS[first[0]]} at {first[1]}:00, remind me {EN_DAYS[second[0]]} at {second[1]}:00"
    today, wall = now.date(), now.replace(tzinfo=None)
    expected = [at(coming(today, day), hour, 0) for day, hour in (first, second)]
    expected = [moment + timedelta(days=7) if moment <= wall else moment for moment in expected]
    assert found(text, now) == expected, text


def money(text: str) -> list[tuple[Decimal, str | None]]:
    return [(m.amount, m.currency) for m in ground(text, datetime.now(ZoneInfo(ZONE)), ZONE, []).money]


@settings(max_examples=150, deadline=None)
@given(value=cents, item=st.sampled_from(ITEMS_EN), form=st.sampled_from(["€{} for {}", "paid {} euros for {}",
       "{} EUR {}", "spent £{} on {}", "{1} {0}"]))  # fmt: skip
def test_english_amounts(value: int, item: str, form: str) -> None:
    amount = Decimal(value) / 100
    text = form.format(f"{amount:,.2f}", item)
    currency = "GBP" if "£" in form else None if form == "{1} {0}" else "EUR"
    assert money(text) == [(amount, currency)], text


@settings(max_examples=150, deadline=None)
@given(value=cents, item=st.sampled_from(ITEMS_DE), form=st.sampled_from(["{} € für {}", "{} Euro für {}",
       "habe {} EUR für {} ausgegeben", "CHF {} für {}"]))  # fmt: skip
def test_german_amounts(value: int, item: str, form: str) -> None:
    amount = Decimal(value) / 100
    written = f"{amount:,.2f}".replace(",", "X").replace(".", ",").replace("X", "'" if "CHF" in form else ".")
    text = form.format(written, item)
    assert money(text) == [(amount, "CHF" if "CHF" in form else "EUR")], text


@settings(max_examples=150, deadline=None)
@given(value=st.integers(1, 9999), item=st.sampled_from(ITEMS_ZH), unit=st.sampled_from(["块", "元", "块钱"]),
       words=st.booleans())  # fmt: skip
def test_chinese_amounts(value: int, item: str, unit: str, words: bool) -> None:
    number = cn2an.an2cn(value) if words else str(value)
    assert money(f"{item}花了{number}{unit}") == [(Decimal(value), "CNY")]


def german_words(n: int) -> str:
    if n < 10:
        return "ein" if n == 1 else DE_UNITS[n]
    if n < 20:
        return DE_TEENS[n]
    tens, units = divmod(n, 10)
    return (f"{'ein' if units == 1 else DE_UNITS[units]}und" if units else "") + DE_TENS[tens]


def english_words(n: int) -> str:
    if n < 10:
        return EN_UNITS[n]
    if n < 20:
        return EN_TEENS[n]
    tens, units = divmod(n, 10)
    return EN_TENS[tens] + (f"-{EN_UNITS[units]}" if units else "")


@settings(max_examples=100, deadline=None)
@given(value=st.integers(2, 99), item=st.sampled_from(ITEMS_DE))
def test_german_number_words(value: int, item: str) -> None:
    assert money(f"{german_words(value)} Euro für {item}") == [(Decimal(value), "EUR")]


@settings(max_examples=100, deadline=None)
@given(value=st.integers(1, 99), item=st.sampled_from(ITEMS_EN), currency=st.sampled_from(
    [("quid", "GBP"), ("euros", "EUR"), ("dollars", "USD")]))  # fmt: skip
def test_english_number_words(value: int, item: str, currency: tuple[str, str]) -> None:
    assert money(f"{english_words(value)} {currency[0]} for {item}") == [(Decimal(value), currency[1])]


@settings(max_examples=100, deadline=None)
@given(count=st.integers(2, 12), item=st.sampled_from(["Gläser Babybrei", "Äpfel", "Rollen Klopapier"]))
def test_quantities_on_a_shopping_list_are_no_money(count: int, item: str) -> None:
    assert money(f"Setz Windeln und {count} {item} auf die Einkaufsliste") == []
