"""What a digest says: numbers from SQL (the `aggregate` tool and the agenda queries), a chart of the month, and
the model's phrasing of them — or a plain template when the model fails. The model never computes a number.

When a digest is due and which were sent are rows of `tools.storage.digests`; the worker's jobs that send them
are `worker.digests`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import structlog

from engine.errors import LLMError
from engine.llm_types import LLM
from tools.aggregate import AggregateArgs, aggregate
from tools.charts import MAX_POINTS, RenderChartArgs
from tools.context import ToolContext
from tools.events import Event, upcoming
from tools.infra.periods import localize
from tools.storage import agenda
from tools.storage.digests import Occurrence
from tools.storage.households import Member

log = structlog.get_logger()

MAX_TEXT = 3000
_SYSTEM = (
    "You write a short digest for a family from the facts given as JSON. Use only those facts. Quote every amount "
    "with its currency exactly as given and never compute, round or convert a number. Write in the language with "
    "ISO code {language}. Plain text, at most 15 lines, no preamble, no questions."
)


@dataclass(frozen=True)
class Digest:
    facts: dict[str, Any]
    text: str
    phrasing: str  # "llm", "template", or "skipped" when there was nothing to say
    chart: RenderChartArgs | None = None


async def gather_facts(ctx: ToolContext, occurrence: Occurrence) -> dict[str, Any]:
    """The digest's numbers and items as JSON-ready data (amounts as exact decimal strings)."""
    last_day = occurrence.period_end - timedelta(days=1)
    facts: dict[str, Any] = {
        "kind": occurrence.kind,
        "period": {"first_day": occurrence.period_start.isoformat(), "last_day": last_day.isoformat()},
        "timezone": ctx.timezone,
    }
    if occurrence.kind == "morning":
        tz = ZoneInfo(ctx.timezone)
        start, end = localize(occurrence.period_start, tz), localize(occurrence.period_end, tz)
        facts["title"] = f"Today, {occurrence.period_start:%A %d %B %Y}"
        facts["reminders"] = [
            _item(i, tz) for i in await agenda.reminders_between(ctx.conn, ctx.household_id, start, end)
        ]
        facts["events"] = [_event(e) for e in await upcoming(ctx, start, end)]
        facts["plans"] = [_item(i, tz) for i in await agenda.plans_between(ctx.conn, ctx.household_id, start, end)]
        return facts
    between = {"field": "occurred_at", "op": "between", "value": [facts["period"]["first_day"], last_day.isoformat()]}
    expenses = {"all": [{"field": "kind", "op": "eq", "value": "expense"}, between]}
    spent = await aggregate(
        ctx, AggregateArgs.model_validate({"op": "sum", "filter": expenses, "group_by": "category"})
    )
    facts["expenses"] = [
        {"category": g.key or "uncategorised", "currency": g.currency, "total": g.value, "count": g.count}
        for g in spent.groups
    ]
    facts["totals"] = [{"currency": t.currency, "total": t.value, "count": t.count} for t in spent.totals]
    if occurrence.kind == "monthly":
        facts["title"] = f"Expenses in {occurrence.period_start:%B %Y}"
    else:
        facts["title"] = f"The week {occurrence.period_start:%d %B} to {last_day:%d %B %Y}"
        stored = await aggregate(
            ctx, AggregateArgs.model_validate({"op": "count", "filter": between, "group_by": "kind"})
        )
        facts["stored"] = [{"kind": g.key or "other", "count": g.count} for g in stored.groups]
    return facts


def _item(item: agenda.AgendaItem, tz: ZoneInfo) -> dict[str, Any]:
    return {"time": item.at.astimezone(tz).strftime("%H:%M"), "text": item.text, "people": list(item.people)}


def _event(event: Event) -> dict[str, Any]:
    time = "all day" if event.all_day else event.start[11:16]
    return {"time": time, "text": event.title, "people": [] if event.whose == "household" else [event.whose]}


def is_empty(facts: dict[str, Any]) -> bool:
    """A morning with nothing on is not worth a message; a month or week without expenses still is."""
    return facts["kind"] == "morning" and not facts["reminders"] and not facts["plans"] and not facts.get("events")


def expense_chart(facts: dict[str, Any]) -> RenderChartArgs | None:
    """A bar chart of the period's spending by category, one series per currency; `None` without expenses."""
    rows = facts.get("expenses") or []
    if not rows:
        return None
    currencies = sorted({row["currency"] for row in rows})
    by_category: dict[str, dict[str, Decimal]] = {}
    for row in rows:  # biggest first within each currency, as aggregate orders them
        by_category.setdefault(row["category"], {})[row["currency"]] = Decimal(row["total"])
    labels = list(by_category)
    if len(labels) > MAX_POINTS:
        kept, rest = labels[: MAX_POINTS - 1], labels[MAX_POINTS - 1 :]
        other = {c: sum((by_category[label].get(c, Decimal(0)) for label in rest), Decimal(0)) for c in currencies}
        by_category = {label: by_category[label] for label in kept} | {"other": other}
        labels = [*kept, "other"]
    series = [
        {"name": currency, "values": [str(by_category[label].get(currency, Decimal(0))) for label in labels]}
        for currency in currencies
    ]
    return RenderChartArgs.model_validate(
        {
            "kind": "bar",
            "title": facts["title"],
            "labels": labels,
            "series": series,
            "unit": currencies[0] if len(currencies) == 1 else None,
        }
    )


def template(facts: dict[str, Any]) -> str:
    """The digest in plain English, for when the model cannot phrase it. Every number as SQL gave it."""
    lines = [facts["title"]]
    if facts["kind"] == "morning":
        lines += [
            f"- {r['time']} {r['text']}" + (f" ({', '.join(r['people'])})" if r["people"] else "")
            for r in facts["reminders"]
        ]
        if facts.get("events"):
            lines.append("Calendar:")
            lines += [
                f"- {e['time']} {e['text']}" + (f" ({', '.join(e['people'])})" if e["people"] else "")
                for e in facts["events"]
            ]
        if facts["plans"]:
            lines.append("Plans:")
            lines += [f"- {p['time']} {p['text']}" for p in facts["plans"]]
        return "\n".join(lines)
    if not facts["expenses"]:
        lines.append("No expenses were recorded.")
    lines += [f"{e['category']}: {e['total']} {e['currency']}" for e in facts["expenses"]]
    if facts["totals"]:
        lines.append("Total: " + ", ".join(f"{t['total']} {t['currency']}" for t in facts["totals"]))
    if facts.get("stored"):
        lines.append("Stored: " + ", ".join(f"{s['count']} {s['kind']}" for s in facts["stored"]))
    return "\n".join(lines)


async def phrase(llm: LLM, facts: dict[str, Any], language: str) -> str | None:
    """The model's wording of the facts; `None` when it fails or answers with nothing usable."""
    messages = [
        {"role": "system", "content": _SYSTEM.format(language=language)},
        {"role": "user", "content": json.dumps(facts, ensure_ascii=False)},
    ]
    try:
        response = await llm.complete(messages)
    except LLMError as exc:
        log.warning("digest.phrasing.failed", kind=facts["kind"], reason=exc.reason[:200])
        return None
    text = (response.content or "").strip()
    if not text or len(text) > MAX_TEXT:
        log.warning("digest.phrasing.unusable", kind=facts["kind"], length=len(text))
        return None
    return text


async def gather(ctx: ToolContext, occurrence: Occurrence) -> Digest:
    """The digest's facts and chart, not yet phrased ("pending"), or "skipped" when there is nothing to say."""
    facts = await gather_facts(ctx, occurrence)
    if is_empty(facts):
        return Digest(facts, "", "skipped")
    return Digest(facts, "", "pending", expense_chart(facts) if occurrence.kind == "monthly" else None)


async def phrased(digest: Digest, llm: LLM, language: str) -> Digest:
    """The digest in the model's words, or the template's. Call it outside any transaction: it may take seconds."""
    if digest.phrasing == "skipped":
        return digest
    text = await phrase(llm, digest.facts, language)
    if text is None:
        return Digest(digest.facts, template(digest.facts), "template", digest.chart)
    return Digest(digest.facts, text, "llm", digest.chart)


def household_language(people: Sequence[Member]) -> str:
    """The household's most common language (the first member's on a tie)."""
    if not people:
        return "en"
    languages = [m.locale.split("-")[0].split("_")[0].lower() for m in people]
    return Counter(languages).most_common(1)[0][0]
