"""The `aggregate` tool: sums, counts, averages, minima and maxima computed by PostgreSQL, never by the model.

Money is always split by currency (EUR is never added to USD), and every value leaves as an exact decimal string.
The tool keeps its one GROUP BY statement (and its totals twin) here rather than in `tools.storage`: the statement
is built from the arguments and is the whole tool, so moving it would only add a layer of indirection.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.context import ToolContext
from tools.filters import Filter, compile_filter, filter_help

MAX_GROUPS = 200

GroupBy = Literal[
    "none", "day", "week", "month", "year", "category", "kind", "person", "merchant", "author", "currency"
]

# Fixed SQL per choice; `{tz}` becomes the bound timezone parameter. Time keys sort as text.
_TIME_KEYS = {
    "day": "to_char(date_trunc('day', m.occurred_at AT TIME ZONE {tz}), 'YYYY-MM-DD')",
    "week": "to_char(date_trunc('week', m.occurred_at AT TIME ZONE {tz}), 'YYYY-MM-DD')",
    "month": "to_char(date_trunc('month', m.occurred_at AT TIME ZONE {tz}), 'YYYY-MM')",
    "year": "to_char(date_trunc('year', m.occurred_at AT TIME ZONE {tz}), 'YYYY')",
}
_KEYS = {
    "none": "NULL::text",
    "category": "m.category",
    "kind": "m.kind",
    "person": "m.ai_understanding ->> 'person'",
    "merchant": "m.ai_understanding ->> 'merchant'",
    "author": "u.name",
    "currency": "m.currency::text",
}
_AGGREGATES = {
    "sum": "sum(m.amount)",
    "avg": "round(avg(m.amount), 2)",
    "min": "min(m.amount)",
    "max": "max(m.amount)",
    "count": "count(*)",
}


class AggregateArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: Literal["sum", "count", "avg", "min", "max"]
    field: Literal["amount"] | None = Field(
        None, description="amount (the default for sum/avg/min/max); count without a field counts memories"
    )
    filter: Filter | None = Field(None, description=filter_help())
    group_by: GroupBy = Field(
        "none", description="day/week/month/year use the member's calendar; week keys are the Monday's date"
    )


class AggregateGroup(BaseModel):
    key: str | None = None
    currency: str | None = None
    value: str
    count: int


class AggregateTotal(BaseModel):
    currency: str | None = None
    value: str
    count: int


class AggregateResult(BaseModel):
    op: str
    field: str | None
    group_by: str
    groups: list[AggregateGroup]
    totals: list[AggregateTotal] = []
    matched: int = Field(description="how many memories matched the filter; 0: nothing to add up")
    truncated: bool = False


async def aggregate(ctx: ToolContext, args: AggregateArgs) -> AggregateResult:
    """Compute exact numbers over stored memories: sum, count, avg, min or max, optionally grouped.

    Use it for every total, count or average ("how much did we spend on groceries last month?", "how many
    times did Ben see the doctor this year?"). Amounts are split by currency and never mixed; values are exact
    decimal strings (averages rounded to 2 places) to repeat as they are. With group_by, `totals` holds one
    total per currency across all groups. `matched` 0 (and no groups) means nothing matched.
    """
    field = None if args.op == "count" and args.field is None else "amount"
    by_currency = field == "amount"
    params: list[Any] = [ctx.household_id]
    where = ["m.household_id = $1", "m.deleted_at IS NULL"]
    if by_currency:
        where.append("m.amount IS NOT NULL")
    if args.filter is not None:
        where.append(compile_filter(args.filter, params, ctx))
    condition = " AND ".join(where)
    base = f"FROM memories m LEFT JOIN users u ON u.id = m.author_id WHERE {condition}"
    currency = "m.currency::text" if by_currency else "NULL::text"
    value = _AGGREGATES[args.op]
    filter_params = list(params)

    if args.group_by in _TIME_KEYS:
        params.append(ctx.timezone)
        key = _TIME_KEYS[args.group_by].format(tz=f"${len(params)}::text")
        order = "1 NULLS LAST, 2"
    else:
        key = _KEYS[args.group_by]
        # Biggest first within each currency; the key breaks ties so the order is stable.
        order = "3 DESC, 1 NULLS LAST, 2" if args.op == "count" else "2, 3 DESC, 1 NULLS LAST"
    params.append(MAX_GROUPS + 1)
    rows = await ctx.conn.fetch(
        f"SELECT {key} AS key, {currency} AS currency, {value} AS value, count(*) AS n {base} "
        f"GROUP BY 1, 2 ORDER BY {order} LIMIT ${len(params)}",
        *params,
    )
    groups = [
        AggregateGroup(key=row["key"], currency=row["currency"], value=str(row["value"]), count=row["n"])
        for row in rows[:MAX_GROUPS]
    ]
    if not groups and args.op == "count" and args.group_by == "none":
        groups = [AggregateGroup(value="0", count=0)]
    totals: list[AggregateTotal] = []
    if args.group_by != "none":
        total_rows = await ctx.conn.fetch(
            f"SELECT {currency} AS currency, {value} AS value, count(*) AS n {base} GROUP BY 1 ORDER BY 1",
            *filter_params,
        )
        totals = [AggregateTotal(currency=r["currency"], value=str(r["value"]), count=r["n"]) for r in total_rows]
    return AggregateResult(
        op=args.op,
        field=field,
        group_by=args.group_by,
        groups=groups,
        totals=totals,
        matched=sum(total.count for total in totals) if totals else sum(group.count for group in groups),
        truncated=len(rows) > MAX_GROUPS,
    )
