"""What the capabilities that read or change memories share: the household's memories nearest to a message, the rows
a correction or a forget may point at (those with an amount it names, those the member just stored, those like its
words), and how a stored note is quoted."""

from __future__ import annotations

from typing import Any

from engine.capabilities.capability import Ask, Situation
from engine.capabilities.phrases import say
from engine.capabilities.topics import overlap
from engine.capabilities.words import EVERYTHING
from tools.memories import recall
from tools.storage import memories as stored


async def search_rows(situation: Situation, query: str, *, limit: int) -> list[dict[str, Any]]:
    """The household's memories nearest to `query`, as the search tool returns them (the member's view)."""
    run = situation.run
    registry = run.deps.registry
    args = registry.validate("search", {"query": query[:500], "limit": limit})
    async with run.transaction() as conn:
        found = await registry.run(run.tool_context(conn), "search", args)
    return list(found.get("memories", []))


def about(row: dict[str, Any]) -> str:
    """What a note is about, for `shares_topic`: its text and the labels stored with it."""
    return " ".join(str(row.get(key) or "") for key in ("content", "category", "kind", "merchant"))


def notes_text(rows: list[dict[str, Any]]) -> str:
    """Stored notes for the prompt: id, day, author and the text as quoted data."""
    return " | ".join(f"[{row['memory_id']}] {quote(row)}" for row in rows)


def quote(row: dict[str, Any]) -> str:
    text = " ".join(str(row.get("content", "")).split())[:300]
    extra = []
    if row.get("amount") is not None:
        extra.append(f"{row['amount']} {row.get('currency') or ''}".strip())
    day = str(row.get("occurred_at") or "")[:10]
    if day:
        extra.append(day)
    return f"{text} ({', '.join(extra)})" if extra else text


_MAX_ROWS = 6


async def candidate_rows(situation: Situation) -> list[dict[str, Any]]:
    """The memories the message may point at, likeliest first: those with an amount it names, those the member's
    last messages stored, then those nearest to its words."""
    run = situation.run
    message = run.message
    numbers = [str(n) for n in situation.grounding.numbers]
    rows: list[dict[str, Any]] = []
    async with run.transaction() as conn:
        ctx = run.tool_context(conn)
        if numbers:
            registry = run.deps.registry
            args = registry.validate(
                "search", {"filter": {"field": "amount", "op": "in", "value": numbers[:10]}, "limit": 5}
            )
            found = await registry.run(ctx, "search", args)
            rows += found.get("memories", [])
        last = await stored.last_stored_ids(conn, message.household_id, message.user_id, message.inbox_id)
        situation.recent = last
        rows += [m.model_dump(mode="json", exclude_none=True) for m in await recall(ctx, last[:3])]
    rows += await search_rows(situation, situation.text, limit=_MAX_ROWS)
    unique: dict[int, dict[str, Any]] = {}
    for row in rows:
        unique.setdefault(int(row["memory_id"]), row)
    return list(unique.values())[:_MAX_ROWS]


def which_one(situation: Situation) -> Ask | list[dict[str, Any]]:
    """The rows the message names when it names them apart (or after the member picked one FAA offered), else a
    question back offering the rows it could mean: "forget the groceries expense" with two of them asks which."""
    offered = [row for row in situation.rows if quote(row) in situation.text]
    if offered:
        return offered
    names = [member.name for member in situation.run.members] + [
        str(r["person"]) for r in situation.rows if r.get("person")
    ]
    shared = {id(row): overlap(situation.text, about(row), names) for row in situation.rows}
    if EVERYTHING.search(situation.text):
        return [row for row in situation.rows if shared[id(row)]]
    best = max(shared.values(), default=0)  # the rows the words fit best: "note own-shared", not "note other-shared"
    alike = [row for row in situation.rows if best and shared[id(row)] == best]
    if len(alike) < 2:
        return alike
    return Ask(say("ask_which", situation.language), tuple(quote(row) for row in alike[:5]))
