"""render_chart: a PNG of fixed size stored in the household's media; bad arguments go back to the model."""

from __future__ import annotations

import asyncio
import struct
import time

import asyncpg
import pytest

from tools.charts import HEIGHT_PX, MAX_POINTS, WIDTH_PX, RenderChartArgs, description
from tools.errors import ToolRetry
from tools.storage import media
from tools.storage.database import Database

from . import REGISTRY, call, make_family

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the IHDR chunk, which the PNG format puts first."""
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


CHARTS = [
    {
        "kind": "bar",
        "title": "February",
        "labels": ["groceries", "rent"],
        "series": [{"name": "EUR", "values": ["35.50", 800]}],
        "unit": "EUR",
    },
    {
        "kind": "line",
        "title": "Months",
        "labels": ["2025-01", "2025-02", "2025-03"],
        "series": [{"name": "EUR", "values": [1, 2.5, "3"]}, {"name": "USD", "values": [0, 0, 9]}],
    },
    {
        "kind": "pie",
        "title": "Shares",
        "labels": ["超市", "rent", "zero"],
        "series": [{"name": "EUR", "values": ["1.10", "2", 0]}],
    },
]


MATHTEXT = r"$\undefinedmacro$ $x^$"  # matplotlib would parse it as TeX and fail the chart


@pytest.mark.parametrize("kind", ["bar", "line", "pie"])
async def test_dollar_signs_in_any_text_are_drawn_as_written(
    db: Database, admin_conn: asyncpg.Connection, kind: str
) -> None:
    family = await make_family(admin_conn, "Anna")
    series = [{"name": MATHTEXT[:40], "values": [1, 2]}, {"name": "_hidden", "values": [2, 1]}]
    args = {"kind": kind, "title": MATHTEXT, "labels": ["$\\frac$", "a$b"], "series": series, "unit": "$"}
    result = await call(db, family, "Anna", "render_chart", {**args, "series": series[:1]} if kind == "pie" else args)
    data = await admin_conn.fetchval("SELECT data FROM media WHERE id = $1", result["media_id"])
    assert png_size(data) == (WIDTH_PX, HEIGHT_PX)


@pytest.mark.parametrize("args", CHARTS, ids=lambda a: a["kind"])
async def test_chart_is_a_png_stored_for_the_household(
    db: Database, admin_conn: asyncpg.Connection, args: dict
) -> None:
    family = await make_family(admin_conn, "Anna")
    result = await call(db, family, "Anna", "render_chart", args)
    assert result == {
        "media_id": result["media_id"],
        "kind": args["kind"],
        "mime": "image/png",
        "width": WIDTH_PX,
        "height": HEIGHT_PX,
    }
    row = await admin_conn.fetchrow(
        "SELECT household_id, kind, mime, data, description FROM media WHERE id = $1", result["media_id"]
    )
    assert (row["household_id"], row["kind"], row["mime"]) == (family.household_id, "chart", "image/png")
    assert png_size(row["data"]) == (WIDTH_PX, HEIGHT_PX)
    assert row["description"] == description(RenderChartArgs.model_validate(args))


def test_a_chart_in_words_says_what_it_shows_and_its_numbers_in_at_most_200_characters() -> None:
    bar, line, pie = (RenderChartArgs.model_validate(args) for args in CHARTS)
    assert description(bar) == "February: groceries 35.50 EUR, rent 800 EUR"
    assert description(line) == "Months: 2025-01 1 EUR / 0 USD, 2025-02 2.5 EUR / 0 USD, 2025-03 3 EUR / 9 USD"
    assert description(pie) == "Shares: 超市 1.10, rent 2, zero 0"
    captioned = RenderChartArgs.model_validate({**CHARTS[0], "caption": "Spending by category, this month"})
    assert description(captioned) == "Spending by category, this month: groceries 35.50 EUR, rent 800 EUR"

    labels = [f"category {i}" for i in range(MAX_POINTS)]
    many = RenderChartArgs.model_validate(
        {**CHARTS[0], "title": "x" * 100, "labels": labels, "series": [{"name": "EUR", "values": [1] * MAX_POINTS}]}
    )
    words = description(many)
    assert len(words) <= media.MAX_DESCRIPTION_CHARS and words.endswith("…")
    assert words.startswith("x" * 100 + ": category 0 1 EUR, category 1 1 EUR")


async def test_charts_asked_for_together_wait_their_turn_instead_of_running_out_of_time(
    db: Database, admin_conn: asyncpg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each chart is drawn in turn; the time limit is for drawing, not for waiting behind the others (a hostile
    burst of charts under load once timed every queued chart out)."""
    import tools.charts

    draw = tools.charts._render_png

    def slow(args: tools.charts.RenderChartArgs) -> bytes:
        time.sleep(0.2)
        return draw(args)

    monkeypatch.setattr(tools.charts, "_render_png", slow)
    monkeypatch.setattr(tools.charts, "RENDER_TIMEOUT_S", 0.3)  # less than the six drawings take together
    family = await make_family(admin_conn, "Anna")
    results = await asyncio.gather(*(call(db, family, "Anna", "render_chart", CHARTS[0]) for _ in range(6)))
    assert len({r["media_id"] for r in results}) == 6


async def test_another_household_cannot_read_the_chart(db: Database, admin_conn: asyncpg.Connection) -> None:
    anna, ben = await make_family(admin_conn, "Anna"), await make_family(admin_conn, "Ben")
    media_id = (await call(db, anna, "Anna", "render_chart", CHARTS[0]))["media_id"]
    async with db.household(ben.household_id) as conn:
        assert await media.load(conn, media_id) is None
    async with db.household(anna.household_id) as conn:
        found = await media.load(conn, media_id)
    assert found is not None and found.data.startswith(PNG_MAGIC)


def _with(**changes: object) -> dict:
    return {**CHARTS[0], **changes}


BAD = [
    (_with(series=[{"name": "EUR", "values": [1]}]), "has 1 values for 2 labels"),
    (_with(series=[{"name": "EUR", "values": ["NaN", 1]}]), "series.0.values.0"),
    (_with(series=[{"name": "EUR", "values": ["Infinity", 1]}]), "series.0.values.0"),
    (_with(series=[{"name": "EUR", "values": [1e13, 1]}]), "less than or equal"),
    (_with(series=[{"name": "EUR", "values": ["lots", 1]}]), "series.0.values.0"),
    (_with(labels=[str(i) for i in range(MAX_POINTS + 1)]), "labels"),
    (_with(labels=[]), "labels"),
    (_with(series=[]), "series"),
    (_with(series=[{"name": f"s{i}", "values": [1, 2]} for i in range(7)]), "series"),
    (_with(kind="radar"), "kind"),
    (_with(title=""), "title"),
    (_with(labels=["x" * 41, "y"]), "labels.0"),
    (
        _with(kind="pie", series=[{"name": "a", "values": [1, 2]}, {"name": "b", "values": [1, 2]}]),
        "exactly one series",
    ),
    (_with(kind="pie", series=[{"name": "a", "values": [-1, 2]}]), "values >= 0"),
    (_with(kind="pie", series=[{"name": "a", "values": [0, 0]}]), "positive total"),
    (_with(kind="line", labels=["only"], series=[{"name": "a", "values": [1]}]), "at least 2 labels"),
    (_with(household_id=1), "extra"),
]


@pytest.mark.parametrize(("args", "problem"), BAD)
def test_bad_arguments_go_back_to_the_model(args: dict, problem: str) -> None:
    with pytest.raises(ToolRetry) as caught:
        REGISTRY.validate("render_chart", args)
    assert problem.lower() in caught.value.message.lower()
