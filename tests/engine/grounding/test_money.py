"""Amounts of money in English, German and Chinese writing, and the numbers that are not money."""

from __future__ import annotations

from decimal import Decimal

import pytest

from engine.grounding.money import find_money


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I spent 35.50 euros on groceries at Lidl", [("35.50", "EUR")]),
        ("71,40 € bei Rewe", [("71.40", "EUR")]),
        ("Tankstelle 62,30€", [("62.30", "EUR")]),
        ("1.250,00 EUR Miete", [("1250.00", "EUR")]),
        ("Rent paid, 1,250 EUR", [("1250", "EUR")]),
        ("Filled up the car for $62.30 at Shell", [("62.30", "USD")]),
        ("Train tickets cost £86.40", [("86.40", "GBP")]),
        ("CHF 40 for the museum", [("40", "CHF")]),
        ("今天在超市买菜花了86元", [("86", "CNY")]),
        ("打车去机场花了120块", [("120", "CNY")]),
        ("昨天买水果¥45", [("45", "CNY")]),
        ("给孩子买书花了25欧元", [("25", "EUR")]),
        ("花了两百五十块", [("250", "CNY")]),
        ("奶茶三十五块五", [("35.5", "CNY")]),
        ("十八块五毛的冰淇淋", [("18.5", "CNY")]),
        ("Bought shoes for Lea (45 euros) and a school bag (30 euros)", [("45", "EUR"), ("30", "EUR")]),
        ("paid 1.5k for the sofa", [("1500", None)]),
        ("Paid 48 for dinner", [("48", None)]),
    ],
)
def test_amounts_and_currencies(text: str, expected: list[tuple[str, str | None]]) -> None:
    found = find_money(text)
    assert [(m.amount, m.currency) for m in found] == [(Decimal(a), c) for a, c in expected]


@pytest.mark.parametrize(
    "text",
    [
        "the pediatrician said she is 104 cm",
        "Lea has a fever of 38.5 today",
        "took 2 pills after lunch",
        "we are in room 305",
        "爸爸量血压140/90",
        "小明今年8岁",
        "the meeting is at 7:30",
        "it was 24.80, not 42.80",  # a correction: numbers, but the message does not speak of paying
    ],
)
def test_numbers_that_are_not_money(text: str) -> None:
    assert find_money(text) == []


def test_currencies_named_without_amounts() -> None:
    from engine.grounding.money import find_currencies

    assert find_currencies("the 25 for the school books was dollars, not euros") == ["USD", "EUR"]


def test_the_currency_of_where_a_member_lives() -> None:
    from datetime import date

    from engine.grounding.money import home_currency

    today = date(2026, 11, 23)
    assert home_currency("en", "Europe/Berlin", today) == "EUR"
    assert home_currency("zh-CN", "Asia/Shanghai", today) == "CNY"
    assert home_currency("de-AT", "UTC", today) == "EUR"  # no country in the timezone: the locale's
    assert home_currency("en", "UTC", today) is None
