"""What a message's steps read before calling the model: the household's members (and the tokens it used today),
and the member's recent turns, pending question and reminders just sent."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import structlog

from engine.errors import BudgetExceeded, ContextError
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
