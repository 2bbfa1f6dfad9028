"""Running a golden case through the system: a fresh household on the virtual clock, its seeds, then each message
through inbox → arq worker → engine → outbox, and after each reply what it did to the database."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
from _golden import MEMBERS, Case, Effects, SeedReminder, Snapshot
from _golden_numbers import Sources
from _golden_time import TIMEZONE, ZONE, VirtualClock, local, resolve, seed_moment
from _llama_log import LlamaLog

from bot.channels import intake
from bot.channels.live import ReplyWaiter
from engine.deps import Deps
from tests import system
from tools.budgets import SetBudgetArgs, set_budget
from tools.context import ToolContext
from tools.events import AddEventArgs, add_event
from tools.infra.recurrence import next_occurrence, parse_rule, resolve_wall_time
from tools.lists import AddListItemsArgs, UpdateListItemArgs, add_list_items, update_list_item
from tools.memories import StoreArgs, store
from tools.storage import firings, households
from tools.storage.households import Principal

FIRED_BEFORE_START = timedelta(minutes=5)


async def run_case(
    deps: Deps,
    admin: asyncpg.Connection,
    waiter: ReplyWaiter,
    case: Case,
    *,
    clock: VirtualClock,
    timeout_s: float,
    reminder_tool: bool = True,
    llama_log: LlamaLog | None = None,
) -> list[Effects]:
    """A fresh household at the clock's start, its seeds, then the case's messages one after the other (each
    waits for its reply); the effects of each. A message without a reply in `timeout_s` ends the case."""
    start = clock.restart()
    name = f"golden-{case.id}-{uuid.uuid4().hex[:6]}"
    family = await system.make_family(admin, name, dict.fromkeys(MEMBERS, TIMEZONE))
    await seed_memories(deps, family, case, start)
    await seed_reminders(deps, family, case, start)
    await seed_lists_and_budgets(deps, family, case, start)
    await seed_events(deps, family, case, start)
    given = seed_sources(case, start)
    before = await snapshot(admin, family.household_id)
    sent: list[Sent] = []
    results = []
    for text, _ in case.messages:
        position = llama_log.position() if llama_log is not None else 0
        sent.append(await send(deps, waiter, family.principal(case.member), clock, text, timeout_s))
        effects = await collect(admin, family.household_id, sent, before, given, reminder_tool=reminder_tool)
        if llama_log is not None and effects.tokens_evaluated is None:
            effects = dataclasses.replace(effects, tokens_evaluated=llama_log.since(position)[0])
        results.append(effects)
        if effects.error:
            break
        before = effects.after
    return results


@dataclass(frozen=True)
class Sent:
    """One message sent and its reply (or the lack of one)."""

    text: str
    inbox_id: int
    at: datetime  # on the virtual clock
    reply: str
    latency_s: float
    error: str | None


async def send(
    deps: Deps, waiter: ReplyWaiter, principal: Principal, clock: VirtualClock, text: str, timeout_s: float
) -> Sent:
    """One message the way the terminal chat sends it, and its reply."""
    at = clock.now()
    started = time.monotonic()
    row, _ = await intake.accept(
        deps,
        principal,
        channel="terminal",
        external_id=f"golden-{uuid.uuid4().hex}",
        text=text,
        trace_id=uuid.uuid4().hex,
        enqueue=False,
    )
    future = waiter.expect(row.id)  # before the job exists, so the reply cannot slip past
    await intake.enqueue_inbound(deps, row)
    error = None
    try:
        reply = await asyncio.wait_for(future, timeout_s)
    except TimeoutError:
        waiter.forget(row.id, future)
        reply, error = {"reply": ""}, f"no reply in {timeout_s:g}s"
    return Sent(text, row.id, at, str(reply.get("reply") or ""), time.monotonic() - started, error)


# ---------------------------------------------------------------------------------------------------- seeds


async def seed_memories(deps: Deps, family: system.Family, case: Case, now: datetime) -> None:
    """The seed memories, stored with the `store` tool by their authors (real embeddings)."""
    for seed in case.seed:
        author = family.principal(seed.author)
        async with deps.db.household(author.household_id, author.user_id) as conn:
            ctx = ToolContext(conn, author.household_id, author.user_id, TIMEZONE, now, deps.embedder)
            args = seed.model_dump(exclude={"when", "author"}, exclude_none=True)
            await store(ctx, StoreArgs(**args, occurred_at=seed_moment(seed.when, now)))


async def seed_lists_and_budgets(deps: Deps, family: system.Family, case: Case, now: datetime) -> None:
    """The seed list items and budgets, through the list and budget tools as the member who writes."""
    if not case.seed_lists and not case.seed_budgets:
        return
    me = family.principal(case.member)
    async with deps.db.household(me.household_id, me.user_id) as conn:
        members = await households.members(conn, me.household_id)
        ctx = ToolContext(conn, me.household_id, me.user_id, TIMEZONE, now, deps.embedder, members=members)
        for item in case.seed_lists:
            added = await add_list_items(
                ctx,
                AddListItemsArgs.model_validate(
                    {"list_name": item.list_name, "items": [item.model_dump(include={"text", "quantity", "assignee"})]}
                ),
            )
            if item.done:
                item_id = added.items[0].item_id
                await update_list_item(ctx, UpdateListItemArgs.model_validate({"item_id": item_id, "done": True}))
        for budget in case.seed_budgets:
            await set_budget(ctx, SetBudgetArgs.model_validate(budget.model_dump()))


async def seed_events(deps: Deps, family: system.Family, case: Case, now: datetime) -> None:
    """The seed calendar events, through the calendar tool as the member who writes (an all-day one on the day of
    its `at`)."""
    if not case.seed_events:
        return
    me = family.principal(case.member)
    async with deps.db.household(me.household_id, me.user_id) as conn:
        members = await households.members(conn, me.household_id)
        ctx = ToolContext(conn, me.household_id, me.user_id, TIMEZONE, now, deps.embedder, members=members)
        for seed in case.seed_events:
            wall = resolve(seed.at, now).local
            start = wall.date() if seed.all_day else wall
            whose = seed.whose or case.member
            await add_event(ctx, AddEventArgs(title=seed.title, start=start, rrule=seed.rrule, whose=whose))


def _first_time(seed: SeedReminder, now: datetime) -> tuple[datetime, datetime]:
    """(the first instant, its wall time) of a seed reminder: its `at`, or 5 minutes before the start if it
    fired; a repeating one's first occurrence from there."""
    wall = resolve(seed.at, now).local if seed.at else local(now - FIRED_BEFORE_START)
    instant = resolve_wall_time(wall, ZONE)
    if seed.rrule:
        first = next_occurrence(parse_rule(seed.rrule, wall, ZONE), ZONE, instant, inclusive=True)
        if first is None:
            raise ValueError(f"seed reminder {seed.text!r}: {seed.rrule} has no occurrence")
        instant = first
    return instant, wall


async def seed_reminders(deps: Deps, family: system.Family, case: Case, now: datetime) -> None:
    """The seed reminders as rows, each inserted by the member who set it; a fired one is then fired as the worker
    fires it (tools/firings.py: a `reminder_firings` row, an outbox row per recipient, the reminder advanced)
    5 minutes before the start, and its notifications marked sent."""
    for seed in case.seed_reminders:
        recipient = seed.recipient or case.member
        everyone = recipient == "household"
        ids = sorted(family.user_ids.values()) if everyone else [family.user_ids[recipient]]
        instant, wall = _first_time(seed, now)
        fired_at = now - FIRED_BEFORE_START
        if seed.fired and instant > fired_at:
            raise ValueError(f"seed reminder {seed.text!r} fired 5 minutes before the start, but is due {wall}")
        creator = family.principal(seed.by or case.member)
        async with deps.db.household(creator.household_id, creator.user_id) as conn:
            reminder_id = await conn.fetchval(
                """INSERT INTO reminders (household_id, created_by, recipient_ids, text, timezone, rrule,
                                          next_fire_at, occurrence_at, dtstart_local, for_household)
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9) RETURNING id""",
                creator.household_id,
                creator.user_id,
                ids,
                seed.text,
                TIMEZONE,
                seed.rrule,
                instant,
                wall,
                everyone,
            )
            if seed.fired:
                fired = await firings.fire(conn, reminder_id, now=fired_at)
                assert fired is not None, f"seed reminder {seed.text!r} did not fire"
                await conn.execute(
                    "UPDATE outbox SET status = 'sent', sent_at = $2 WHERE id = ANY($1::bigint[])",
                    [delivery.outbox_id for delivery in fired.deliveries],
                    fired_at,
                )


def seed_sources(case: Case, start: datetime) -> Sources:
    """What the seeds give a reply to quote: their texts, amounts and times, and the case's start."""
    moments = [start, *(seed_moment(seed.when, start) for seed in case.seed)]
    for reminder in case.seed_reminders:
        instant, wall = _first_time(reminder, start)
        moments += [instant, wall]
    moments += [resolve(event.at, start).local for event in case.seed_events]
    return Sources(
        texts=(
            *(seed.content for seed in case.seed),
            *(reminder.text for reminder in case.seed_reminders),
            *(event.title for event in case.seed_events),
        ),
        numbers=tuple(seed.amount for seed in case.seed if seed.amount is not None),
        moments=tuple(moments),
    )


# ---------------------------------------------------------------------------------------------------- effects


async def snapshot(admin: asyncpg.Connection, household_id: int) -> Snapshot:
    """Every memory (forgotten ones too) and reminder of the household, as plain rows."""
    memories = await admin.fetch(
        """SELECT id, content, ai_understanding ->> 'kind' AS kind, ai_understanding ->> 'category' AS category,
                  ai_understanding ->> 'person' AS person, ai_understanding ->> 'merchant' AS merchant, amount,
                  currency, occurred_at, (occurred_at AT TIME ZONE $2)::date AS local_day,
                  deleted_at IS NULL AS live, visibility
           FROM memories WHERE household_id = $1 ORDER BY id""",
        household_id,
        TIMEZONE,
    )
    reminders = await admin.fetch(
        """SELECT r.id, r.text, r.status, r.rrule, r.next_fire_at, r.dtstart_local, r.last_fired_at, r.event_id,
                  CASE WHEN r.for_household THEN ARRAY['household']
                       ELSE ARRAY(SELECT u.name FROM users u WHERE u.id = ANY(r.recipient_ids) ORDER BY u.name)
                  END AS recipients,
                  ARRAY(SELECT f.fired_at FROM reminder_firings f WHERE f.reminder_id = r.id) AS fired,
                  EXISTS (SELECT FROM reminder_firings f WHERE f.reminder_id = r.id AND f.acknowledged_at IS NOT NULL)
                      AS acknowledged
           FROM reminders r WHERE r.household_id = $1 ORDER BY r.id""",
        household_id,
    )
    events = await admin.fetch(
        """SELECT e.id, e.title, e.starts_at, e.all_day, e.rrule, e.status, coalesce(u.name, 'household') AS whose
           FROM events e LEFT JOIN users u ON u.id = e.member_id WHERE e.household_id = $1 ORDER BY e.id""",
        household_id,
    )
    forgotten = await admin.fetchval(
        "SELECT count(*) FROM users WHERE household_id = $1 AND forgotten_at IS NOT NULL", household_id
    )
    items = await admin.fetch(
        """SELECT i.id, l.name AS list, i.text, i.quantity, u.name AS assignee, i.done_at IS NOT NULL AS done
           FROM list_items i JOIN lists l ON l.id = i.list_id LEFT JOIN users u ON u.id = i.assignee_id
           WHERE i.household_id = $1 AND i.cleared_at IS NULL ORDER BY i.id""",
        household_id,
    )
    budgets = await admin.fetch(
        "SELECT id, category, amount, currency FROM budgets WHERE household_id = $1 ORDER BY id", household_id
    )
    return Snapshot(
        [dict(row) for row in memories],
        [dict(row) for row in reminders],
        [dict(row) for row in events],
        forgotten,
        [dict(row) for row in items],
        [dict(row) for row in budgets],
    )


def _row_sources(after: Snapshot) -> Sources:
    texts = [row["content"] for row in after.memories] + [r["text"] for r in after.reminders]
    texts += [row["rrule"] for row in after.reminders if row["rrule"]]
    texts += [row["title"] for row in after.events]
    moments: list[datetime] = [row["occurred_at"] for row in after.memories]
    moments += [row["starts_at"] for row in after.events]
    for row in after.reminders:
        moments += [m for m in (row["next_fire_at"], row["dtstart_local"], row["last_fired_at"]) if m is not None]
        moments += list(row["fired"])
    texts += [f"{row['quantity'] or ''} {row['text']}" for row in after.list_items]
    amounts = tuple(Decimal(row["amount"]) for row in after.memories if row["amount"] is not None)
    amounts += tuple(Decimal(row["amount"]) for row in after.budgets)
    return Sources(texts=tuple(texts), numbers=amounts, moments=tuple(moments))


async def collect(
    admin: asyncpg.Connection,
    household_id: int,
    sent: list[Sent],
    before: Snapshot,
    given: Sources,
    *,
    reminder_tool: bool,
) -> Effects:
    """What the last message sent did: its turn (outcome, cost, route), the rows it created, the household after
    it, and the sources its reply may quote — the member's messages so far, the seeds, the household's rows now
    (and how many it made) and every tool result journaled for the case's messages."""
    last = sent[-1]
    turn = await admin.fetchrow(
        """SELECT outcome, llm_calls, tokens_in, tokens_out, trace ->> 'route' AS route,
                  trace ->> 'tokens_evaluated' AS tokens_evaluated
           FROM interactions WHERE inbox_id = $1""",
        last.inbox_id,
    )
    journaled = await admin.fetch(
        "SELECT payload FROM journal WHERE inbox_id = ANY($1::bigint[]) AND kind <> 'llm' ORDER BY inbox_id, seq",
        [message.inbox_id for message in sent],
    )
    charts = await admin.fetchval(
        "SELECT coalesce(sum(jsonb_array_length(coalesce(payload -> 'media_ids', '[]'))), 0) FROM outbox "
        "WHERE inbox_id = $1",
        last.inbox_id,
    )
    after = await snapshot(admin, household_id)
    known = {row["id"] for row in before.memories}
    known_reminders = {row["id"] for row in before.reminders}
    new_reminders = [row for row in after.reminders if row["id"] not in known_reminders]
    created = [row for row in after.memories if row["id"] not in known and row["live"]]
    rows = _row_sources(after)
    # "Saved 2 expenses": how many rows the message made is a fact about the rows, too.
    counts = (Decimal(len(created)), Decimal(len(new_reminders)))
    evaluated = turn["tokens_evaluated"] if turn else None
    return Effects(
        reply=last.reply,
        outcome=turn["outcome"] if turn else "none",
        memories=[_memory_fields(row) for row in created],
        reminders=len(new_reminders) if reminder_tool else None,
        llm_calls=turn["llm_calls"] if turn else 0,
        latency_s=last.latency_s,
        error=last.error,
        sent_at=last.at,
        new_reminders=new_reminders,
        before=before,
        after=after,
        sources=Sources(
            texts=(*(message.text for message in sent), *given.texts, *rows.texts),
            numbers=(*given.numbers, *rows.numbers, *counts),
            moments=(last.at, *given.moments, *rows.moments),
            payloads=tuple(_payload(row["payload"]) for row in journaled),
        ),
        route=(turn["route"] if turn else None) or "-",
        charts=int(charts),
        tokens_in=turn["tokens_in"] if turn else 0,
        tokens_out=turn["tokens_out"] if turn else 0,
        tokens_evaluated=None if evaluated is None else int(float(evaluated)),
    )


def _memory_fields(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("content", "merchant", "kind", "category", "person", "amount", "currency", "local_day", "visibility")
    return {key: row[key] for key in keys}


def _payload(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value
