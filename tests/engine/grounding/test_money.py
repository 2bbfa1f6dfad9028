"""Amounts of money in English, German and Chinese writing, and the numbers that are not money."""

from __future__ import annotations

from decimal import Decimal

import pytest

from engine.grounding.money import answered_amount, find_money


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
        ("friseur zwanzig euro, pony schneiden bei mia", [("20", "EUR")]),  # casual German: its number words
        ("超市 86.5", [("86.5", None)]),  # something bought and a price with one decimal
        ("年终奖发了 八千", [("8000", None)]),  # Chinese numerals beside a word of income
        ("max 300 für lebensmittel im monat", [("300", None)]),  # a ceiling on a month
        ("bump the grocery budget up to 450", [("450", None)]),  # "to 450" is no clock time
        # a price said aloud: euros, then cents
        ("the vet bill came to a hundred and forty two fifty euros", [("142.50", "EUR")]),
        ("zweiundvierzig fünfzig euro beim tierarzt", [("42.50", "EUR")]),
        ("paid 142 and 50 euros for the kids", [("142", None), ("50", "EUR")]),  # written digits stay apart
        # a price per piece and the sum: the sum is what was spent
        ("kids haircuts 18 each, so 36 total", [("36", None)]),
        ("3 tickets at 12 euros each, 36 in total", [("36", None)]),
        ("paid 12 each for the tickets", [("12", None)]),
        # a bill shared: the family's part is what it spent
        ("dinner at the thai place 86 split with the neighbours, our half was 43", [("43", None)]),
        ("rechnung beim italiener geteilt, unser anteil 38", [("38", None)]),
        # slang and words of paying for a renewal or a tip
        ("just dropped 86 at tesco 🙈", [("86", None)]),
        ("视频会员续费了25", [("25", None)]),
        ("32 on petrol", [("32", None)]),  # jotted down with what it was for
        ("12 für den metzger", [("12", None)]),
        # a meal or a ride jotted down with its price after where it was
        ("dinner at the thai place 62", [("62", None)]),
        ("abendessen beim italiener 54", [("54", None)]),
        ("晚饭吃火锅268", [("268", None)]),
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
        "Mia hat 38.5 Fieber",  # "hat" is no clothing here, and a fever is no price
        "friseur 20",  # a whole number beside something bought is not yet a price; not the "eur" of "friseur"
        "Lea has a fever of 38.5 today, gave her paracetamol",  # measured, not paid
        "tyre pressure for the golf is 2.4 bar front and 2.2 back",  # a measure, and the number beside it
        "baby weighs 3.2 kg, 52.5 cm",
        "ben hat heute die zweite tetanusimpfung bekommen",  # an ordinal, though "bekommen" can mean received money
        "zum 3. mal das gleiche formular bekommen",
        "optician says ben is slightly short sighted, -0.75 both eyes, glasses only for the board",  # signed
        "mia hat im zeugnis eine 1 in mathe bekommen",  # a grade
        "ben got a 2 in his maths test",
        "zählerstand strom heute 48213",  # a meter's reading
        "the code for the bike lock is 3391",
        "ben takes bus 42",  # what the thing goes by, right after it
        "plumber dave 0176 5551234",  # a phone number
        "toms flight number is BA 2490",  # what something is numbered by
        "unsere kundennummer bei den stadtwerken ist 4471298",
        "mia hat jetzt schuhgröße 31",  # a size: the shoe is inside the compound
        "儿子对花生过敏，医生今天确认了",  # peanuts (花生) are no spending (花)
        "lunch at the cafe, back at 2",  # a number that does not close the note
    ],
)
def test_numbers_that_are_not_money(text: str) -> None:
    assert find_money(text) == []


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("hab 20 bar bezahlt für pizza", "20"),  # "bar" is cash when the message speaks of paying
        ("vet bill came to 180 ugh", "180"),  # a sigh after the sum counts nothing
        ("bought 2 kg apples for 3.50", "3.50"),
        ("grandma sent 100 for mias birthday", "100"),  # given by someone: money without a currency
        ("oma hat 50 für mia geschickt", "50"),
        ("zum 3. mal parkticket bezahlt 5 euro", "5"),
    ],
)
def test_money_beside_a_measure_or_given(text: str, amount: str) -> None:
    assert [str(money.amount) for money in find_money(text)] == [amount]


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


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("friseur zwanzig euro, pony schneiden bei mia", "de"),
        ("hab bei mia ne zecke entfernt", "de"),
        ("alles klar", "de"),
        ("tanken 60€", "de"),
        ("milch ist alle", "de"),
        ("uber home last nite was 27 bucks smh", "en"),
        ("need eggs n bread", "en"),
        ("ok", "en"),  # either: English
        ("Netflix 13.99", "en"),
        ("哈哈哈 收到", "zh"),
    ],
)
def test_the_language_of_casual_messages(text: str, language: str) -> None:
    from engine.grounding.language import language_of

    assert language_of(text) == language


@pytest.mark.parametrize(
    ("reply", "amount"),
    [("38.50", "38.50"), ("38,50", "38.50"), (" 299 ", "299"), ("二百八", "280"), ("1'280", "1280"), ("45 quid", None),
     ("the raincoat", None), ("0", None)],
)  # fmt: skip
def test_a_reply_of_a_number_alone_answers_how_much(reply: str, amount: str | None) -> None:
    answered = answered_amount(reply)
    assert (None if answered is None else str(answered.amount)) == amount


@pytest.mark.parametrize(
    ("text", "amount"),
    [("paid the plumber today\n180 cash", "180"), ("paid the plumber\n180", "180"), ("bought shoes today\n45", "45")],
)
def test_an_amount_on_a_line_of_its_own_is_read_like_one_beside_its_words(text: str, amount: str) -> None:
    """The member's answer to "how much?" comes after the message it answers, on a new line."""
    assert [str(money.amount) for money in find_money(text)] == [amount]
