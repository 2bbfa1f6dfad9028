"""The budget tools: set_budget, remove_budget and budget_status, over `tools.storage.budgets`. Alerts at 80 % and
100 % are decided when an expense is stored (`tools.memories.store` calls `check_spending`)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from tools.context import ToolContext
from tools.errors import RowNotFound, ToolRetry
from tools.fields import Amount, Currency, RowId, Slug, blank_is_none
from tools.permissions import check_adult
from tools.storage import budgets as stored


class SetBudgetArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    category: Slug = Field(description="the spending category, lowercase slug as expenses use it, e.g. groceries")
    amount: Amount = Field(description="the monthly budget, e.g. 400")
    currency: Currency = Field(description="ISO 4217 code, e.g. EUR")


class BudgetStatusArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    category: Annotated[Slug | None, BeforeValidator(blank_is_none)] = Field(
        None, description="one category; null: every budget"
    )


class RemoveBudgetArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    budget_id: RowId


class Budget(BaseModel):
    budget_id: int
    category: str
    currency: str
    amount: str
    previous_amount: str | None = Field(default=None, description="the budget before this change; null: it is new")
    previous_updated_by: int | None = Field(default=None, description="who had changed it last before, for undo")


class BudgetLine(BaseModel):
    budget_id: int
    category: str
    currency: str
    amount: str
    spent: str
    left: str = Field(description="negative when overspent")
    percent: int
    month: str


class BudgetStatusResult(BaseModel):
    budgets: list[BudgetLine]


async def set_budget(ctx: ToolContext, args: SetBudgetArgs) -> Budget:
    """Set the household's monthly budget for one spending category ("set a 400 euro grocery budget").

    Setting it again changes the amount. The household's adults get a message when the month's spending in that
    category reaches 80 % and 100 % of it. Only adults set budgets. Returns the budget.
    """
    await check_adult(ctx, "set_budget", "budgets")
    if args.amount <= 0:
        raise ToolRetry("set_budget", "a budget is an amount above zero", for_member="A budget is above zero.")
    row, previous = await stored.upsert(
        ctx.conn, ctx.household_id, category=args.category, currency=args.currency, amount=args.amount, by=ctx.user_id
    )
    return Budget(
        budget_id=row["id"],
        category=row["category"],
        currency=row["currency"],
        amount=str(row["amount"]),
        previous_amount=None if previous is None else str(previous["amount"]),
        previous_updated_by=None if previous is None else previous["updated_by"],
    )


async def remove_budget(ctx: ToolContext, args: RemoveBudgetArgs) -> Budget:
    """Remove one monthly budget ("remove the groceries budget"); its spending is no longer watched or alerted.

    Only adults remove budgets. Returns the budget as it was, with who had changed it last (for undo).
    """
    await check_adult(ctx, "remove_budget", "budgets")
    row = await stored.remove(ctx.conn, ctx.household_id, args.budget_id)
    if row is None:
        raise RowNotFound("remove_budget", f"there is no budget {args.budget_id}")
    return Budget(
        budget_id=row["id"],
        category=row["category"],
        currency=row["currency"],
        amount=str(row["amount"]),
        previous_updated_by=row["updated_by"],
    )


async def budget_status(ctx: ToolContext, args: BudgetStatusArgs) -> BudgetStatusResult:
    """How the month's spending stands against the budgets ("how much is left for groceries?").

    For each budget (or the one category asked about): the monthly amount, spent so far this calendar month, what
    is left and the percent spent — computed by the database; state these numbers as they are.
    """
    rows = await stored.status(ctx.conn, ctx.household_id, _now(ctx), args.category)
    if not rows and args.category is not None:
        known = [r["category"] for r in await stored.status(ctx.conn, ctx.household_id, _now(ctx))]
        raise ToolRetry(
            "budget_status", f"there is no budget for {args.category!r}; budgets: {', '.join(known) or 'none yet'}"
        )
    return BudgetStatusResult(
        budgets=[
            BudgetLine(
                budget_id=r["id"],
                category=r["category"],
                currency=r["currency"],
                amount=str(r["amount"]),
                spent=str(r["spent"]),
                left=str(r["left_over"]),
                percent=r["percent"],
                month=r["month"].strftime("%Y-%m"),
            )
            for r in rows
        ]
    )


async def after_expense(
    ctx: ToolContext, *, category: str | None, currency: str | None, amount: Decimal | None, occurred_at: datetime
) -> None:
    """Check the budget of an expense just stored or changed (alerts go out through the outbox)."""
    if category is None or currency is None or amount is None:
        return
    await stored.check_spending(
        ctx.conn,
        ctx.household_id,
        category=category,
        currency=currency,
        occurred_at=occurred_at,
        now=_now(ctx),
        inbox_id=ctx.inbox_id,
    )


def _now(ctx: ToolContext) -> datetime:
    return ctx.now if ctx.now.tzinfo else ctx.now.replace(tzinfo=UTC)
