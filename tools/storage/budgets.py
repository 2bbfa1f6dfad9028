"""The `budgets` and `budget_alerts` tables: a monthly budget per category and currency, the month's spending
against it, and the alerts to the household's adults when that spending reaches 80 % and 100 %.

Months are the household's calendar months (its timezone). Spending is the sum of the month's live expenses in
that category and currency, computed by PostgreSQL, as the member it is shown to may see it: their own private
expenses count for them, another member's never do. Whether an expense crosses a threshold is decided in SQL in the
transaction that stores it, once for each adult, acting for that adult: the budget row is locked first, so two
members storing expenses at once are counted one after the other, and the alert's key (household, budget, month,
threshold, adult) lets each threshold fire once for each adult.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

import asyncpg

from tools.storage import outbox
from tools.storage.database import Connection, acting_for, fetch_one
from tools.storage.identities import delivery_address

THRESHOLDS = (80, 100)

# The household's month of an instant, as a local date and as the range of instants it spans.
_MONTH = """h AS (SELECT timezone AS tz FROM households WHERE id = $1),
            mo AS (SELECT date_trunc('month', $2::timestamptz AT TIME ZONE h.tz) AS start, h.tz FROM h),
            span AS (SELECT mo.start::date AS month, mo.start AT TIME ZONE mo.tz AS since,
                            (mo.start + interval '1 month') AT TIME ZONE mo.tz AS until FROM mo)"""
_SPENT = """SELECT coalesce(sum(x.amount), 0)::numeric(14, 2) FROM memories x
            WHERE x.household_id = b.household_id AND x.deleted_at IS NULL AND x.ai_understanding ->> 'kind' = 'expense'
                  AND x.ai_understanding ->> 'category' = b.category AND x.currency = b.currency
                  AND x.occurred_at >= span.since AND x.occurred_at < span.until"""


@dataclass(frozen=True)
class Alert:
    budget_id: int
    category: str
    currency: str
    amount: Decimal
    spent: Decimal
    threshold: int
    month: date


async def upsert(
    conn: Connection,
    household_id: int,
    *,
    category: str,
    currency: str,
    amount: Decimal,
    by: int,
    updated_by: int | None = None,
) -> tuple[asyncpg.Record, asyncpg.Record | None]:
    """Set the budget of a category and currency; the row and the row as it was before (None: it is new).
    `updated_by` records another member than `by` as the last to change it (undo puts back who it was)."""
    previous = await conn.fetchrow(
        """SELECT id, amount, updated_by FROM budgets
           WHERE household_id = $1 AND category = $2 AND currency = $3 FOR UPDATE""",
        household_id,
        category,
        currency,
    )
    row = await fetch_one(
        conn,
        """INSERT INTO budgets (household_id, category, currency, amount, created_by, updated_by)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (household_id, category, currency)
               DO UPDATE SET amount = excluded.amount, updated_by = excluded.updated_by, updated_at = now()
           RETURNING id, category, currency, amount, created_by, updated_by""",
        household_id,
        category,
        currency,
        amount,
        by,
        by if updated_by is None else updated_by,
    )
    return row, previous


async def get(conn: Connection, household_id: int, budget_id: int, *, lock: bool = False) -> asyncpg.Record | None:
    return await conn.fetchrow(
        "SELECT id, category, currency, amount, created_by, updated_by FROM budgets WHERE household_id = $1 AND id = $2"
        + (" FOR UPDATE" if lock else ""),
        household_id,
        budget_id,
    )


async def of_category(
    conn: Connection, household_id: int, category: str, currency: str, *, lock: bool = False
) -> asyncpg.Record | None:
    """The budget of a category and currency (None: there is none)."""
    return await conn.fetchrow(
        """SELECT id, category, currency, amount, created_by, updated_by FROM budgets
           WHERE household_id = $1 AND category = $2 AND currency = $3"""
        + (" FOR UPDATE" if lock else ""),
        household_id,
        category,
        currency,
    )


async def remove(conn: Connection, household_id: int, budget_id: int) -> asyncpg.Record | None:
    """Delete a budget; the deleted row (None: there was none)."""
    return await conn.fetchrow(
        """DELETE FROM budgets WHERE household_id = $1 AND id = $2
           RETURNING id, category, currency, amount, updated_by""",
        household_id,
        budget_id,
    )


async def status(
    conn: Connection, household_id: int, at: datetime, category: str | None = None
) -> list[asyncpg.Record]:
    """Each budget (or those of one category) with the spending of the household's month around `at`, what is
    left of it (negative: overspent) and the share spent in whole percent."""
    return list(
        await conn.fetch(
            f"""WITH {_MONTH},
                s AS (SELECT b.id, b.category, b.currency, b.amount, span.month, ({_SPENT}) AS spent
                      FROM budgets b, span
                      WHERE b.household_id = $1 AND ($3::text IS NULL OR b.category = $3))
                SELECT s.*, s.amount - s.spent AS left_over, round(s.spent * 100 / s.amount)::integer AS percent
                FROM s ORDER BY s.category, s.currency""",
            household_id,
            at,
            category,
        )
    )


async def check_spending(
    conn: Connection,
    household_id: int,
    *,
    category: str,
    currency: str,
    occurred_at: datetime,
    now: datetime,
    inbox_id: int | None,
) -> list[Alert]:
    """After an expense in `category`/`currency` was stored or changed: the alerts it newly triggers, recorded and
    queued in the outbox for each adult of the household whose own view of the month's spending (without other
    members' private expenses) reached a threshold. Only the current month alerts (an expense back-dated to an
    earlier month changes no one's plans). Call inside the transaction that stored the expense."""
    budget = await conn.fetchrow(
        "SELECT id, amount FROM budgets WHERE household_id = $1 AND category = $2 AND currency = $3 FOR UPDATE",
        household_id,
        category,
        currency,
    )
    if budget is None:
        return []
    adults = await conn.fetch(
        """SELECT id, locale FROM users
           WHERE household_id = $1 AND role IN ('owner', 'adult') AND forgotten_at IS NULL ORDER BY id""",
        household_id,
    )
    alerts = []
    for adult in adults:
        # Statements of their own, after the lock: in READ COMMITTED they see every expense committed before the
        # lock was granted, including those of a transaction that held the lock a moment ago.
        async with acting_for(conn, int(adult["id"])):
            rows = await conn.fetch(
                f"""WITH {_MONTH},
                         now_span AS (SELECT date_trunc('month', $5::timestamptz AT TIME ZONE h.tz)::date AS month
                                      FROM h),
                         b AS (SELECT * FROM budgets WHERE id = $3),
                         spending AS (SELECT ({_SPENT}) AS spent, span.month FROM b, span)
                    INSERT INTO budget_alerts (household_id, budget_id, month, threshold, spent, inbox_id, user_id)
                    SELECT $1, $3, spending.month, t, spending.spent, $6, $8
                    FROM spending, now_span, unnest($4::integer[]) AS t
                    WHERE spending.month = now_span.month AND spending.spent * 100 >= t * $7::numeric
                    ON CONFLICT DO NOTHING
                    RETURNING threshold, spent, month""",
                household_id,
                occurred_at,
                budget["id"],
                list(THRESHOLDS),
                now,
                inbox_id,
                budget["amount"],
                adult["id"],
            )
        reached = [
            Alert(int(budget["id"]), category, currency, budget["amount"], r["spent"], int(r["threshold"]), r["month"])
            for r in rows
        ]
        if reached:
            await _queue(
                conn, household_id, int(adult["id"]), str(adult["locale"]), max(reached, key=_threshold), inbox_id
            )
            alerts.extend(reached)
    return alerts


def _threshold(alert: Alert) -> int:
    return alert.threshold


_TEXTS = {
    "en": {
        80: "💶 Budget: {spent} of the {amount} {currency} {category} budget spent this month (80 %).",
        100: "💶 Budget: the {amount} {currency} {category} budget for this month is used up ({spent} spent).",
    },
    "de": {
        80: "💶 Budget: {spent} von {amount} {currency} für {category} diesen Monat ausgegeben (80 %).",
        100: "💶 Budget: das Budget von {amount} {currency} für {category} ist diesen Monat aufgebraucht "
        "({spent} ausgegeben).",
    },
    "zh": {
        80: "💶 预算：本月{category}已花费 {spent}，预算 {amount} {currency}（80%）。",
        100: "💶 预算：本月{category}预算 {amount} {currency} 已用完（已花费 {spent}）。",
    },
}


def alert_text(alert: Alert, locale: str) -> str:
    texts = _TEXTS.get(locale[:2], _TEXTS["en"])
    return texts[alert.threshold].format(
        spent=alert.spent, amount=alert.amount, currency=alert.currency, category=alert.category
    )


async def _queue(
    conn: Connection, household_id: int, user_id: int, locale: str, alert: Alert, inbox_id: int | None
) -> None:
    """One message to the adult, on their own channel; the highest threshold reached says it all (a jump from
    70 % to 110 % is one message, though both thresholds are recorded)."""
    address = await delivery_address(conn, user_id)
    await outbox.add(
        conn,
        household_id=household_id,
        user_id=user_id,
        channel=address.channel,
        recipient=address.recipient,
        text=alert_text(alert, locale),
        payload={
            "kind": "budget_alert",
            "budget_id": alert.budget_id,
            "threshold": alert.threshold,
            "month": alert.month.isoformat(),
            "inbox_id": inbox_id,
        },
    )


async def pending_alerts(conn: Connection, household_id: int, inbox_id: int) -> list[int]:
    """The outbox rows of the alerts one message triggered that wait for delivery."""
    rows = await conn.fetch(
        """SELECT o.id FROM outbox o
           WHERE o.household_id = $1 AND o.status = 'pending' AND o.inbox_id IS NULL
                 AND o.payload ->> 'kind' = 'budget_alert' AND (o.payload ->> 'inbox_id')::bigint = $2
           ORDER BY o.id""",
        household_id,
        inbox_id,
    )
    return [int(r["id"]) for r in rows]
