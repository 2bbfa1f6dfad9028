"""The money page: one month's expenses by category and currency, added up by PostgreSQL through the `aggregate`
tool (never in Python), drawn as bars, with a month picker and the month's rows as CSV; and the household's
monthly budgets with this month's spending against them (adults set and remove them)."""

from __future__ import annotations

import csv
import functools
import io
from calendar import monthrange
from datetime import date, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from aiohttp import web
from pydantic import ValidationError

from bot.web.pages.render import VIEWER, html, redirect
from bot.web.pages.security import DEPS
from bot.web.pages.tooling import invalid, json_body, json_tool, member_tools, refusal, row_id
from tools.aggregate import AggregateArgs, aggregate
from tools.budgets import (
    BudgetStatusArgs,
    RemoveBudgetArgs,
    SetBudgetArgs,
    budget_status,
    remove_budget,
    set_budget,
)
from tools.errors import ToolRetry
from tools.filters import compile_filter
from tools.memories import SearchArgs, search
from tools.storage import budgets as stored_budgets
from tools.storage import memories as stored

CSV_ROWS = 5000
LISTED = 50  # the month's expenses on the page, newest first (the CSV has them all)


def _month(request: web.Request) -> date:
    today = request.app[DEPS].clock.now().astimezone(ZoneInfo(request[VIEWER].timezone)).date()
    text = request.query.get("month", "")
    try:
        year, month = (int(part) for part in text.split("-")) if text else (today.year, today.month)
        return date(year, month, 1)
    except ValueError:
        raise web.HTTPBadRequest(reason="month looks like 2026-03") from None


def _expenses_in(month: date) -> dict[str, Any]:
    last = month.replace(day=monthrange(month.year, month.month)[1])
    return {
        "all": [
            {"field": "kind", "op": "eq", "value": "expense"},
            {"field": "occurred_at", "op": "between", "value": [month.isoformat(), last.isoformat()]},
        ]
    }


def _bars(groups: list[Any]) -> list[dict[str, Any]]:
    """Bar lengths in per cent of the largest in the same currency (amounts in different currencies are never
    compared)."""
    largest: dict[str | None, Decimal] = {}
    for group in groups:
        largest[group.currency] = max(largest.get(group.currency, Decimal(0)), Decimal(group.value))
    return [
        {
            "category": group.key,
            "currency": group.currency,
            "value": group.value,
            "count": group.count,
            "share": round(100 * float(Decimal(group.value) / largest[group.currency]))
            if largest[group.currency] > 0
            else 0,
        }
        for group in groups
    ]


async def money_page(request: web.Request, *, error: str | None = None, status: int = 400) -> web.Response:
    month = _month(request)
    args = AggregateArgs.model_validate({"op": "sum", "filter": _expenses_in(month), "group_by": "category"})
    async with member_tools(request) as ctx:
        result = await aggregate(ctx, args)
        budgets = await stored_budgets.status(ctx.conn, ctx.household_id, ctx.now)
        listed = await search(
            ctx, SearchArgs.model_validate({"filter": _expenses_in(month), "order": "newest", "limit": LISTED})
        )
    previous = (month - timedelta(days=1)).replace(day=1)
    following = (month + timedelta(days=31)).replace(day=1)
    return html(
        request,
        "money.html",
        month=month.strftime("%Y-%m"),
        shown=month,
        prev_month=previous,
        next_month=following,
        expenses=listed.memories,
        more=len(listed.memories) >= LISTED,
        previous=previous.strftime("%Y-%m"),
        following=following.strftime("%Y-%m"),
        bars=_bars(result.groups),
        totals=result.totals,
        budgets=budgets,
        error=error,
        status=status if error else 200,
    )


async def set_budget_form(request: web.Request) -> web.Response:
    """An adult sets (or changes) the monthly budget of a category, through the `set_budget` tool."""
    form = await request.post()
    fields = {key: str(form.get(key, "")) for key in ("category", "amount", "currency")}
    try:
        args = SetBudgetArgs.model_validate(fields)
        async with member_tools(request) as ctx:
            await set_budget(ctx, args)
    except ValidationError as exc:
        return await money_page(request, error=invalid(exc))
    except ToolRetry as exc:
        status, text = refusal(request, exc)
        return await money_page(request, error=text, status=status)
    return redirect("/money")


async def remove_budget_form(request: web.Request) -> web.Response:
    args = RemoveBudgetArgs(budget_id=row_id(request, "budget_id"))
    try:
        async with member_tools(request) as ctx:
            await remove_budget(ctx, args)
    except ToolRetry as exc:
        status, text = refusal(request, exc)
        return await money_page(request, error=text, status=status)
    return redirect("/money")


async def set_budget_json(request: web.Request) -> web.Response:
    """POST /app/budgets {"category": "groceries", "amount": "400", "currency": "EUR"} (adults)."""
    return await json_tool(request, SetBudgetArgs, set_budget, await json_body(request))


async def remove_budget_json(request: web.Request) -> web.Response:
    """POST /app/budgets/{budget_id}/remove (adults)."""
    return await json_tool(request, RemoveBudgetArgs, remove_budget, {"budget_id": row_id(request, "budget_id")})


async def budgets_json(request: web.Request) -> web.Response:
    """GET /app/budgets: this month's spending against each budget, from the `budget_status` tool."""
    async with member_tools(request) as ctx:
        status = await budget_status(ctx, BudgetStatusArgs(category=None))
    return web.json_response(status.model_dump(mode="json"))


async def money_csv(request: web.Request) -> web.Response:
    """The month's expenses as CSV (date, category, what, amount, currency, member), oldest first."""
    month = _month(request)
    args = SearchArgs.model_validate({"filter": _expenses_in(month)})
    async with member_tools(request) as ctx:
        condition = functools.partial(compile_filter, args.filter, scope=ctx)
        rows = await stored.find(ctx.conn, ctx.household_id, condition=condition, order="oldest", limit=CSV_ROWS)
    zone = ZoneInfo(request[VIEWER].timezone)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["date", "category", "what", "amount", "currency", "member"])
    for row in rows:
        understanding = row["ai_understanding"] or {}
        writer.writerow(
            [
                row["occurred_at"].astimezone(zone).date().isoformat(),
                understanding.get("category") or "",
                _cell(row["content"]),
                str(row["amount"]),
                row["currency"],
                row["author"] or "",
            ]
        )
    return web.Response(
        text=out.getvalue(),
        content_type="text/csv",
        headers={"Content-Disposition": f'attachment; filename="faa-expenses-{month:%Y-%m}.csv"'},
    )


def _cell(text: str) -> str:
    """A text cell a spreadsheet shows as text: a leading =, +, - or @ would be read as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
