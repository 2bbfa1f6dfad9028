"""Context assembly: the base context of every analysis and the extra context the model may ask for."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import structlog

from engine.analysis import ContextRequest
from engine.errors import BudgetExceeded, ContextError, ToolRetry
from engine.run import Run
from tools.storage import firings, households, interactions
from tools.storage.database import Connection
from tools.storage.firings import FiredNote
from tools.storage.households import Member
from tools.storage.interactions import PendingClarification, Turn

log = structlog.get_logger()


@dataclass(frozen=True)
class People:
    members: tuple[Member, ...]
    tokens_used: int | None  # the household's LLM tokens today, when ENGINE_HOUSEHOLD_DAILY_TOKENS is set


async def read_people(run: Run, conn: Connection) -> People:
    """The household's members and, with a daily allowance, its tokens used today (in its timezone)."""
    message = run.message
    members = await households.members(conn, message.household_id)
    if run.deps.settings.engine.household_daily_tokens is None:
        return People(members, None)
    timezone = ZoneInfo(await households.household_timezone(conn, message.household_id))
    midnight = datetime.combine(run.deps.clock.now().astimezone(timezone).date(), time(), timezone)
    return People(members, await interactions.tokens_since(conn, message.household_id, midnight))


def apply_people(run: Run, people: People) -> None:
    """Fill the run with the members and the asking member's timezone, and narrow the message's token budget to
    what is left of the household's daily allowance; raises when the member is unknown or the allowance is spent."""
    message = run.message
    run.members = people.members
    me = next((m for m in run.members if m.id == message.user_id), None)
    if me is None:
        raise ContextError(f"member {message.user_id} is not in household {message.household_id}")
    run.timezone = me.timezone
    daily, used = run.deps.settings.engine.household_daily_tokens, people.tokens_used
    if daily is not None and used is not None:
        if used >= daily:
            raise BudgetExceeded("household daily tokens", daily, household=True)
        if daily - used < run.budget.max_tokens:
            run.budget.max_tokens, run.budget.household_tokens = daily - used, True


async def load_people(run: Run) -> None:
    """`read_people` in a transaction of its own, then `apply_people`."""
    async with run.transaction() as conn:
        people = await read_people(run, conn)
    apply_people(run, people)


@dataclass(frozen=True)
class History:
    turns: list[Turn]
    pending: PendingClarification | None
    fired: list[FiredNote]  # reminders recently sent to the member, so "snooze" and "done" know which


async def read_history(run: Run, conn: Connection, turns: int) -> History:
    message = run.message
    since = run.deps.clock.now() - timedelta(hours=run.deps.settings.reminder.context_hours)
    recent = (
        await interactions.recent_turns(conn, message.household_id, message.user_id, turns, shared=message.shared)
        if turns
        else []
    )
    pending = await interactions.pending_clarification(conn, message.user_id, message.chat)
    fired = await firings.recently_fired(conn, message.user_id, since)
    return History(recent, pending, fired)


def base_context(run: Run, history: History) -> str:
    turns, pending = history.turns, history.pending
    me = next(m for m in run.members if m.id == run.message.user_id)
    tz = ZoneInfo(run.timezone)
    now = run.deps.clock.now().astimezone(tz)
    lines = [
        f"Now: {now.isoformat(timespec='minutes')} ({now.strftime('%A')}, timezone {run.timezone}).",
        f"Member writing: {me.name} (role {me.role}, locale {me.locale}).",
        "Household members: " + ", ".join(f"{m.name} ({m.role})" for m in run.members) + ".",
    ]
    if turns:
        lines.append("Recent conversation:")
        for turn in turns:
            lines.append(f"- {me.name}: {turn.user_text}\n  FAA: {turn.reply_text}")
    if history.fired:
        lines.append("Reminders recently sent to the member (a 'snooze' or 'done' refers to the newest one):")
        for note in history.fired:
            kind = "repeating" if note.repeating else "one-off"
            state = "acknowledged" if note.acknowledged else note.status
            sent = note.fired_at.astimezone(tz).isoformat(timespec="minutes")
            lines.append(f"- reminder_id {note.reminder_id}: {note.text!r}, sent {sent} ({kind}, {state})")
    if pending is not None:
        lines.append(
            f"Pending question you asked: {pending.question!r} about the earlier message "
            f"{pending.state.get('text', '')!r}. The new message answers it."
        )
    return "\n".join(lines)


_SEARCH_ARGS: dict[str, Any] = {
    "recent_memories": lambda r: {"order": "newest", "limit": r.limit, **({"filter": r.filter} if r.filter else {})},
    "semantic_search": lambda r: {
        "query": r.query or "",
        "limit": r.limit,
        **({"filter": r.filter} if r.filter else {}),
    },
    "direct_search": lambda r: {
        "limit": r.limit,
        "order": "newest",
        "filter": r.filter or {"field": "content", "op": "contains", "value": r.query or ""},
    },
}


async def serve_requests(run: Run, requests: list[ContextRequest]) -> str:
    """Answer the model's context requests; a request that fails is reported to the model, not raised."""
    answers: list[dict[str, Any]] = []
    for request in requests:
        try:
            answers.append({"request": request.model_dump(exclude_none=True), "result": await _serve(run, request)})
        except ToolRetry as exc:
            answers.append({"request": request.model_dump(exclude_none=True), "error": exc.message})
    return json.dumps(answers, ensure_ascii=False, default=str)


async def _serve(run: Run, request: ContextRequest) -> Any:
    message = run.message
    if request.kind == "thread_summaries":
        async with run.transaction() as conn:
            turns = await interactions.recent_turns(
                conn, message.household_id, message.user_id, request.limit, shared=message.shared
            )
        return [{"at": t.created_at.isoformat(), "member": t.user_text, "faa": t.reply_text} for t in turns]
    registry = run.deps.registry
    args = registry.validate("search", _SEARCH_ARGS[request.kind](request))
    async with run.transaction() as conn:
        return await registry.run(run.tool_context(conn), "search", args)
