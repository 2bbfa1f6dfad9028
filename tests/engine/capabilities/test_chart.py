"""The chart capability without a database: which messages its words claim (and which stay with sum and expense),
what chart the words and the grounding settle, the `aggregate` call that adds it up and the `render_chart`
arguments drawn from its result."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from engine.capabilities import CAPABILITIES, routing
from engine.capabilities.capability import LANGUAGES
from engine.capabilities.chart import _PHRASES, ChartAnswer, aggregate_args, drawing, settle
from engine.grounding import ground
from tools.charts import RenderChartArgs

NOW = datetime(2026, 11, 23, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))
TODAY = NOW.date()
MEMBERS = ["Anna", "Ben", "Tom", "Mia"]


def reading(text: str) -> routing.Reading:
    return routing.reading(text, ground(text, NOW, "Europe/Berlin", MEMBERS))


@pytest.mark.parametrize(
    "text",
    [
        "can u show me a graph of what we spent this month",
        "show me a chart of our spending",
        "how has our spending changed over the last months",
        "chart of last month's expenses by category pls",
        "pie chart of where the money went since the start of the year",
        "zeig mir ein diagramm der ausgaben",
        "Kannst du mir ein Balkendiagramm unserer Kosten vom letzten Monat machen?",
        "wie haben sich unsere ausgaben in den letzten monaten entwickelt",
        "给我看看这个月的开销图",
        "画个图看看上个月钱都花哪了",
        "最近几个月开销的变化趋势",
        "今年以来买菜的开销图",
        # a bare request: of spending, the only chart there is
        "can you make me a graph?",
        "show me the chart again",
        "kannst du mir mal ein diagramm machen",
        "给我画个图表",
    ],
)
def test_requests_for_a_chart_go_to_chart_in_every_language(text: str) -> None:
    assert routing.decisive(reading(text)) == "chart"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("how much did we spend on groceries", "sum"),
        ("how much did we spend on groceries this month?", "sum"),
        ("Wie viel haben wir letzten Monat für Essen ausgegeben?", "sum"),
        ("这个月买菜一共花了多少钱？", "sum"),
        ("what did we spend the most on last month", "sum"),
        ("neue Grafikkarte für 300 Euro gekauft", "expense"),  # "Grafik" in a word of its own only
        ("paid 30 for the chart paper and pens", "expense"),  # an amount said: a record, not a request
        ("meat pie cost 5 euros", "expense"),
    ],
)
def test_money_questions_and_records_stay_where_they_were(text: str, expected: str) -> None:
    assert routing.decisive(reading(text)) == expected


def test_only_a_message_that_asks_for_a_picture_may_be_chosen_by_its_examples() -> None:
    chart = CAPABILITIES["chart"]
    height = reading("a graph of Mia's height")  # names something else: the examples and the model weigh it
    assert chart.eligible(height) and not chart.claims(height)
    assert not chart.eligible(reading("groceries this month - whats the damage"))
    assert chart.hint(reading("show me a chart")) > 0 == chart.hint(reading("whats the damage"))


def settled(text: str, writer: str = "Anna") -> ChartAnswer:
    return settle(text, ground(text, NOW, "Europe/Berlin", MEMBERS), TODAY, writer)


@pytest.mark.parametrize(
    ("text", "by", "first", "last", "span"),
    [
        ("show me a chart of our spending", "category", date(2026, 11, 1), date(2026, 11, 30), "this month"),
        ("chart of last month's expenses", "category", date(2026, 10, 1), date(2026, 10, 31), "last month"),
        (
            "chart of spending since the start of the year",
            "category",
            date(2026, 1, 1),
            TODAY,
            "since the start of the year",
        ),
        ("how has our spending changed over the last months", "month", date(2026, 6, 1), TODAY, "over the last months"),
        ("spending trend over the past 3 months?", "month", date(2026, 9, 1), TODAY, "over the past 3 months"),
        ("visualise our costs week by week", "week", date(2026, 10, 5), TODAY, "over the last weeks"),
        ("how has our spending changed this month", "week", date(2026, 11, 1), TODAY, "this month"),
        ("can i see a chart of spending per person this month", "author", date(2026, 11, 1), date(2026, 11, 30),
         "this month"),
        ("wie haben sich unsere ausgaben in den letzten drei monaten entwickelt", "month", date(2026, 9, 1), TODAY,
         "in den letzten drei monaten"),
        ("zeig mir ein diagramm der ausgaben", "category", date(2026, 11, 1), date(2026, 11, 30), "diesen Monat"),
        ("最近三个月开销的变化", "month", date(2026, 9, 1), TODAY, "最近三个月"),
        ("每个人花了多少 画个柱状图", "author", date(2026, 11, 1), date(2026, 11, 30), "这个月"),
    ],
)  # fmt: skip
def test_the_words_and_the_grounding_settle_the_period_and_the_split(
    text: str, by: str, first: date, last: date, span: str
) -> None:
    answer = settled(text)
    assert (answer.by, answer.first, answer.last, answer.span) == (by, first, last, span)


def test_a_named_category_is_charted_over_time_and_a_named_member_alone() -> None:
    groceries = settled("graph our grocery spending since the start of the year")
    assert (groceries.categories, groceries.by, groceries.kind) == (["groceries"], "month", "expense")
    assert settled("chart of Ben's spending this month").whose == "Ben"
    assert settled("chart of my spending", writer="Mia").whose == "Mia"
    assert settled("chart of our spending").whose is None
    assert settled("make a graph of our income this year").kind == "income"


def test_the_aggregate_call_keeps_the_period_the_kind_the_categories_and_the_member() -> None:
    args = aggregate_args(settled("chart of Ben's grocery spending last month"))
    assert args == {
        "op": "sum",
        "field": "amount",
        "group_by": "week",
        "filter": {
            "all": [
                {"field": "kind", "op": "eq", "value": "expense"},
                {"field": "occurred_at", "op": "between", "value": ["2026-10-01", "2026-10-31"]},
                {"field": "category", "op": "in", "value": ["groceries"]},
                {"field": "author", "op": "eq", "value": "Ben"},
            ]
        },
    }


def test_over_time_every_step_is_drawn_and_each_currency_is_a_series() -> None:
    answer = settled("how has our spending changed over the last months")
    result = {
        "groups": [
            {"key": "2026-09", "currency": "EUR", "value": "41.00", "count": 1},
            {"key": "2026-11", "currency": "EUR", "value": "128.20", "count": 4},
            {"key": "2026-11", "currency": "USD", "value": "12.00", "count": 1},
        ],
        "totals": [],
        "matched": 6,
    }
    args = RenderChartArgs.model_validate(drawing(result, answer, "en"))
    assert args.labels == ["2026-06", "2026-07", "2026-08", "2026-09", "2026-10", "2026-11"]
    assert [(s.name, [str(v) for v in s.values]) for s in args.series] == [
        ("EUR", ["0", "0", "0", "41.00", "0", "128.20"]),
        ("USD", ["0", "0", "0", "0", "0", "12.00"]),
    ]
    assert (args.kind, args.unit, args.title) == ("bar", None, "Spending, month by month: 2026-06-01 – 2026-11-23")
    assert args.caption == "Spending month by month, over the last months"


def test_by_category_the_biggest_comes_first_and_a_chinese_title_has_no_chinese_glyphs() -> None:
    answer = settled("给我看看这个月的开销图")
    result = {
        "groups": [
            {"key": "fuel", "currency": "CNY", "value": "300.00", "count": 2},
            {"key": None, "currency": "CNY", "value": "20.50", "count": 1},
        ],
        "matched": 3,
    }
    args = RenderChartArgs.model_validate(drawing(result, answer, "zh"))
    assert args.labels == ["fuel", "other"] and args.unit == "CNY"
    assert args.title == "2026-11-01 – 2026-11-30"  # the image's fonts have no Chinese; the reply says the words
    assert args.caption == "这个月支出（按类别）"  # and so does the chart's description


def test_every_phrase_is_in_every_language() -> None:
    for key, texts in _PHRASES.items():
        assert set(LANGUAGES) <= set(texts), key


def test_a_chart_takes_as_many_currencies_as_the_chart_tool_draws() -> None:
    answer = settled("show me a chart of our spending")
    codes = ["EUR", "USD", "GBP", "CHF", "CNY", "JPY", "SEK"]
    result = {"groups": [{"key": "travel", "currency": code, "value": "1.00", "count": 1} for code in codes]}
    args = RenderChartArgs.model_validate(drawing(result, answer, "en"))
    assert [series.name for series in args.series] == codes[:6]
