"""The `render_chart` tool: a bar, line or pie PNG drawn with matplotlib (Agg) from numbers the tools computed.

The chart is stored in `media` for the household with what it shows in words (`description`: the web chat's alt
text); the reply that follows carries its id, so channels that show images attach it and the others send a signed
link.
"""

from __future__ import annotations

import asyncio
import threading
import warnings
from decimal import Decimal
from io import BytesIO
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema, model_validator

from tools.context import ToolContext
from tools.errors import ToolError
from tools.storage import media

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.container import BarContainer

WIDTH_PX, HEIGHT_PX, DPI = 800, 500, 100
RENDER_TIMEOUT_S = 10.0
QUEUE_TIMEOUT_S = 60.0
MAX_POINTS = 40
MAX_SERIES = 6
_LIMIT = Decimal("1e12")
# matplotlib's global state (font cache, rcParams) is not safe across threads: draw one chart at a time.
_RENDER_LOCK = threading.Lock()

ChartKind = Literal["bar", "line", "pie"]
Label = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)]
Number = Annotated[
    Decimal,
    Field(allow_inf_nan=False, ge=-_LIMIT, le=_LIMIT),
    WithJsonSchema({"type": ["number", "string"], "description": "a finite number, e.g. 35.50"}),
]


class ChartSeries(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Label = Field(description="What the numbers are, e.g. 'EUR' or 'Anna'")
    values: list[Number] = Field(min_length=1, max_length=MAX_POINTS, description="One value per label, in order")


class RenderChartArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: ChartKind = Field(description="bar (compare groups), line (change over time), pie (shares of one total)")
    title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
    labels: list[Label] = Field(min_length=1, max_length=MAX_POINTS, description="Category or time labels, in order")
    series: list[ChartSeries] = Field(min_length=1, max_length=MAX_SERIES)
    unit: Annotated[str, StringConstraints(strip_whitespace=True, max_length=12)] | None = Field(
        default=None, description="Axis unit, e.g. EUR"
    )
    caption: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)] | None = Field(
        default=None,
        description="What it shows in words, for whoever cannot see it, e.g. 'Spending by category, this month' "
        "(default: the title)",
    )

    @model_validator(mode="after")
    def _consistent(self) -> RenderChartArgs:
        for item in self.series:
            if len(item.values) != len(self.labels):
                raise ValueError(
                    f"series {item.name!r} has {len(item.values)} values for {len(self.labels)} labels; "
                    "give exactly one value per label"
                )
        if self.kind == "line" and len(self.labels) < 2:
            raise ValueError("a line chart needs at least 2 labels")
        if self.kind == "pie":
            if len(self.series) != 1:
                raise ValueError("a pie chart takes exactly one series")
            values = self.series[0].values
            if any(v < 0 for v in values) or sum(values) <= 0:
                raise ValueError("a pie chart needs values >= 0 with a positive total")
        return self


class RenderChartResult(BaseModel):
    media_id: int
    kind: str
    mime: str = "image/png"
    width: int
    height: int


async def render_chart(ctx: ToolContext, args: RenderChartArgs) -> RenderChartResult:
    """Draw a bar, line or pie chart as an image that is sent with your reply.

    Use it when the member asks for a chart, graph or picture of numbers. Pass only numbers that tools returned
    (e.g. the groups of an `aggregate` call), never numbers you made up; one series per currency. The image is
    attached to your reply automatically: just mention it in the text.
    """
    # Charts are drawn one at a time: charts asked for together wait their turn (up to QUEUE_TIMEOUT_S) rather than
    # spending their drawing time in the queue.
    try:
        png = await asyncio.wait_for(asyncio.to_thread(render_png, args), QUEUE_TIMEOUT_S + RENDER_TIMEOUT_S)
    except TimeoutError:
        raise ToolError("render_chart", "drawing the chart took too long") from None
    if png is None:
        raise ToolError("render_chart", "too many charts are being drawn right now; try again in a minute")
    media_id = await media.save(
        ctx.conn,
        ctx.household_id,
        kind="chart",
        mime="image/png",
        data=png,
        source_inbox_id=ctx.inbox_id,
        description=description(args),
    )
    return RenderChartResult(media_id=media_id, kind=args.kind, width=WIDTH_PX, height=HEIGHT_PX)


def description(args: RenderChartArgs) -> str:
    """The chart in words for whoever cannot see it (an alt text): what it shows, then each label with its numbers,
    as many as fit in `media.MAX_DESCRIPTION_CHARS` ("…" where the rest are left out). "Spending by category, this
    month: groceries 35.50 EUR, fuel 60.00 EUR"."""
    heading = args.caption or args.title
    points = [_point(args, index, label) for index, label in enumerate(args.labels)]
    for count in range(len(points), 0, -1):
        text = f"{heading}: {', '.join(points[:count])}" + ("…" if count < len(points) else "")
        if len(text) <= media.MAX_DESCRIPTION_CHARS:
            return text
    return f"{heading}…"


def _point(args: RenderChartArgs, index: int, label: str) -> str:
    """A label with its numbers: "groceries 35.50 EUR", or one per series: "2026-11 128.20 EUR / 12.00 USD"."""
    if len(args.series) == 1:
        return f"{label} {args.series[0].values[index]:f}" + (f" {args.unit}" if args.unit else "")
    return f"{label} " + " / ".join(f"{series.values[index]:f} {series.name}" for series in args.series)


def render_png(args: RenderChartArgs) -> bytes | None:
    """The chart as PNG bytes of WIDTH_PX × HEIGHT_PX, or None when other charts kept the drawing busy for
    QUEUE_TIMEOUT_S. CPU-bound: call it in a thread from async code."""
    if not _RENDER_LOCK.acquire(timeout=QUEUE_TIMEOUT_S):
        return None
    try:
        return _render_png(args)
    finally:
        _RENDER_LOCK.release()


def _render_png(args: RenderChartArgs) -> bytes:
    # Imported here: matplotlib takes most of a second to import, and most processes never draw a chart.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with warnings.catch_warnings():
        # Labels in scripts the bundled fonts lack (e.g. CJK) are drawn as boxes rather than failing the chart.
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font")
        figure = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI, layout="constrained")
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        axes.set_title(args.title, parse_math=False)
        if args.kind == "pie":
            axes.pie(
                [float(v) for v in args.series[0].values],
                labels=args.labels,
                autopct="%1.0f%%",
                startangle=90,
                counterclock=False,
                textprops={"parse_math": False},
            )
            axes.set_aspect("equal")
        else:
            _draw_axes(axes, args)
        buffer = BytesIO()
        figure.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def _draw_axes(axes: Axes, args: RenderChartArgs) -> None:
    positions = list(range(len(args.labels)))
    count = len(args.series)
    handles: list[Artist | BarContainer] = []
    if args.kind == "bar":
        width = 0.8 / count
        for index, item in enumerate(args.series):
            offset = (index - (count - 1) / 2) * width
            bars = axes.bar([p + offset for p in positions], [float(v) for v in item.values], width)
            handles.append(bars)
            if count == 1 and len(positions) <= 12:
                axes.bar_label(bars, labels=[str(v) for v in item.values], parse_math=False)  # exact, as given
    else:
        for item in args.series:
            handles.extend(axes.plot(positions, [float(v) for v in item.values], marker="o"))
    crowded = len(args.labels) > 6
    axes.set_xticks(
        positions, args.labels, rotation=30 if crowded else 0, ha="right" if crowded else "center", parse_math=False
    )
    if args.unit:
        axes.set_ylabel(args.unit, parse_math=False)
    axes.grid(axis="y", alpha=0.3)
    if count > 1:
        # Labels given with the handles: a name starting with "_" would otherwise be taken as "no legend entry".
        for text in axes.legend(handles, [item.name for item in args.series]).get_texts():
            text.set_parse_math(False)
