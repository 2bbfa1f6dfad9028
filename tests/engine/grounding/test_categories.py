"""The category taxonomy: what families' words for money are filed under, in English, German and Chinese."""

from __future__ import annotations

import pytest

from engine.grounding.categories import (
    _EXPENSES,
    _INCOME,
    EXPENSE_CATEGORIES,
    INCOME_CATEGORIES,
    categories,
    category_of,
)


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("swimming class fee 60", "sports"),  # the longer synonym wins over "class fee"
        ("window cleaner 45 quid", "household"),  # "quid" is a currency, not a category
        ("twenty quid for the window cleaner", "household"),
        ("Netflix 13.99 monthly subscription charged today", "subscriptions"),
        ("groceries 37.20 at aldi and 4.99 for a magazine", "groceries"),
        ("how much have we spent on takeaway since the start of the month", "restaurants"),
        ("zwölf Euro für Brötchen", "groceries"),
        ("Lebensmitteleinkauf bei Rewe", "groceries"),  # the start of a German compound
        ("Kinderschuhe für Mia", "clothing"),  # the end of one
        ("Setz Windeln auf die Liste", "kids"),
        ("Fensterputzer 40 Euro", "household"),
        ("paid £45 for ben's school trip to london", "education"),
        ("打车去机场花了120块", "transport"),
        ("奶茶三十五块五", "drinks"),
        ("游泳课学费800元", "sports"),
        ("给狗买了狗粮", "pets"),
        ("Tierarzt 85 €", "pets"),
        ("car insurance renewed", "insurance"),
        ("MOT for the car", "car"),
        ("friseur zwanzig euro, pony schneiden bei mia", "beauty"),
        ("剪头发 50块", "beauty"),
        ("kids haircuts 18 each", "beauty"),  # an English plural of a synonym
        ("new school shoes for ben, 49.99", "clothing"),  # of two side by side, the second is what was bought
        ("avg grocery trip this month?", "groceries"),  # a trip or a run for something is that thing
        ("zahnreinigung 95€ selbst bezahlt", "health"),  # the longest word: teeth cleaning, not cleaning
        ("💸 62 on the big shop", "groceries"),
        ("für mias flöte 140 gezahlt", "education"),  # an instrument for school music
        ("paid 300 for bens new guitar", "education"),
        ("wie viel ham wir diesen monat fürs essen bestellen ausgegeben", "restaurants"),  # food ordered in
        ("we ordered in, 42", "restaurants"),
    ],
)
def test_expense_categories(text: str, category: str) -> None:
    assert category_of(text, "expense") == category


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("salary came in today", "salary"),
        ("Gehalt ist da, 3200 Euro", "salary"),
        ("got the christmas bonus", "bonus"),
        ("sold the old bike on ebay for 150", "sales"),
        ("Habe 150 Euro für das alte Fahrrad auf Kleinanzeigen bekommen", "sales"),
        ("发工资了", "salary"),
        ("年终奖到账", "bonus"),
    ],
)
def test_income_categories(text: str, category: str) -> None:
    assert category_of(text, "income") == category


@pytest.mark.parametrize(
    "text",
    ["45 quid", "it was 24.80, not 42.80", "Preise steigen", "haha thanks mate 👍", "谢谢，晚安", "Feier am Samstag"],
)
def test_words_that_name_no_category(text: str) -> None:
    assert category_of(text, "expense") is None


def test_the_names_are_the_models_enum_with_other_last() -> None:
    assert categories("expense") == EXPENSE_CATEGORIES and EXPENSE_CATEGORIES[-1] == "other"
    assert categories("income") == INCOME_CATEGORIES and INCOME_CATEGORIES[-1] == "other"
    assert {"groceries", "restaurants", "fuel", "household", "kids", "subscriptions", "pets"} <= set(EXPENSE_CATEGORIES)
    assert {"salary", "bonus", "refund"} <= set(INCOME_CATEGORIES)
    for name in (*EXPENSE_CATEGORIES, *INCOME_CATEGORIES):
        assert name.isascii() and name == name.lower() and " " not in name


@pytest.mark.parametrize("table", [_EXPENSES, _INCOME])
def test_every_category_has_synonyms_in_three_languages_and_no_synonym_names_two(
    table: dict[str, tuple[str, str, str]],
) -> None:
    owner: dict[str, str] = {}
    for name, lines in table.items():
        assert all(line.strip() for line in lines), name
        for words in "|".join(lines).split("|"):
            assert owner.setdefault(words, name) == name, f"{words!r} is both {owner[words]} and {name}"


def test_every_category_a_message_names() -> None:
    from engine.grounding.categories import categories_named

    assert categories_named("how much on groceries and fuel this month") == {"groceries", "fuel"}
    assert categories_named("how much have we blown on eating out this month") == {"restaurants"}
    assert categories_named("what did we spend last week") == frozenset()


def test_a_reply_names_every_category_in_the_members_language() -> None:
    from engine.grounding.categories import categories, label

    for category in {*categories("expense"), *categories("income")}:
        assert label(category, "en") == category
        assert label(category, "de") != category or category == "bonus"  # "Bonus" is German too
        assert label(category, "zh") != category
    assert (label("groceries", "de"), label("groceries", "zh")) == ("Lebensmittel", "买菜")
    assert label("Kita", "de") == "Kita"  # a household's own category, as it is
