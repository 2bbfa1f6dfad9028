"""Scripted model answers for the end-to-end stories: what a competent model would plan for each message."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fakes.openai_server import ChatRequest, Scripted


def member_message(request: ChatRequest) -> str:
    """The member's own words inside the engine's first user message."""
    first_user = next(m for m in request.messages if m["role"] == "user")
    return str(first_user["content"]).rsplit("Message:\n", 1)[-1].strip()


def is_analysis(request: ChatRequest) -> bool:
    return request.schema_name == "analysis"


def analysis(
    intent: str,
    *,
    plan: list[dict[str, Any]] | None = None,
    reply: str | None = None,
    needs_results: bool = False,
    clarification: dict[str, Any] | None = None,
    context_requests: list[dict[str, Any]] | None = None,
    summary: str = "scripted",
) -> Scripted:
    return Scripted.json(
        {
            "understanding": {"intent": intent, "summary": summary, "language": "en"},
            "context_requests": context_requests or [],
            "clarification": clarification,
            "tool_plan": [{"id": f"s{i}", "depends_on": [], **step} for i, step in enumerate(plan or [], 1)],
            "response": {"reply": reply, "needs_tool_results": needs_results},
        }
    )


GROCERIES_THIS_MONTH = {
    "tool": "aggregate",
    "args": {
        "op": "sum",
        "field": "amount",
        "filter": {
            "all": [
                {"field": "category", "op": "eq", "value": "groceries"},
                {"field": "occurred_at", "op": "period", "value": "this_month"},
            ]
        },
    },
}


def tool_results(request: ChatRequest) -> list[dict[str, Any]]:
    """The tool results the engine handed to the model in its respond call."""
    for message in reversed(request.messages):
        if message["role"] == "user" and "Tool results (JSON):" in str(message["content"]):
            text = str(message["content"]).split("Tool results (JSON):\n", 1)[1]
            return list(json.JSONDecoder().raw_decode(text)[0])
    return []


def expense_plan(text: str) -> dict[str, Any] | None:
    """`I spent 35.50 euros on groceries at Lidl` → a store step."""
    match = re.search(r"spent ([\d.]+) (euros?|dollars?) on (\w+)(?: at (\w+))?", text, re.I)
    if match is None:
        return None
    amount, unit, category, merchant = match.groups()
    args: dict[str, Any] = {
        "content": text,
        "kind": "expense",
        "category": category.lower(),
        "amount": amount,
        "currency": "EUR" if unit.lower().startswith("euro") else "USD",
    }
    if merchant:
        args["merchant"] = merchant
    return {"tool": "store", "args": args}


DOCTOR_SEARCH = {"tool": "search", "args": {"query": "doctor said about Tom allergy", "limit": 3}}


def story_analysis(text: str) -> Scripted | None:
    """The analysis for the issue's three story messages (an expense, a sum, a question over notes); `None` for
    any other text."""
    if step := expense_plan(text):
        args = step["args"]
        return analysis(
            "record", plan=[step], reply=f"Saved {args['amount']} {args['currency']} for {args['category']}."
        )
    if text.startswith("How much did we spend on groceries"):
        return analysis("query", plan=[GROCERIES_THIS_MONTH], needs_results=True)
    if text.startswith("What did the doctor"):
        return analysis("query", plan=[DOCTOR_SEARCH], needs_results=True)
    return None


def story_reply(request: ChatRequest) -> Scripted:
    """The respond call after the story plans: the sum per currency, or the note that was found."""
    results = tool_results(request)
    first = results[0]["result"] if results and results[0]["ok"] else {}
    if "groups" in first:
        totals = ", ".join(f"{g['value']} {g['currency']}" for g in first["groups"]) or "0 EUR"
        return Scripted(content=f"You spent {totals} on groceries this month.")
    if "memories" in first:
        rows = first["memories"]
        return Scripted(content=f"The note says: {rows[0]['content']}" if rows else "I found nothing.")
    return Scripted(content="Done.")
