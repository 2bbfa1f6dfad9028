"""Scoring a golden case by its effects: pure functions over what `_golden_run` collected, no database here.

Each message of a case (earlier turns, then the case's text) is checked against its own expectation; a case
passes when every check of every message holds. The reasons say what did not, prefixed "turn N:" for turns.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from _golden import (
    Case,
    CaseResult,
    Effects,
    Expectation,
    ExpectedBudget,
    ExpectedChange,
    ExpectedEvent,
    ExpectedEventStatus,
    ExpectedListItem,
    ExpectedMemory,
    ExpectedReminder,
    ExpectedReminderStatus,
)
from _golden_numbers import forbidden_numbers, invented_numbers, mentions
from _golden_time import local, resolve
from dateutil.rrule import rrulestr

REMINDER_TOOL = "schedule_reminder"
_OCCURRENCES = 4  # a repeating reminder repeats as expected when its next occurrences are the expected ones


def score(case: Case, messages: list[Effects], *, reminder_tool: bool = True) -> CaseResult:
    """Pass when every expectation of every message holds for its effects; the reasons say what did not."""
    if case.needs_reminders and not reminder_tool:
        last = messages[-1] if messages else None
        return CaseResult(case, last, passed=False, skipped=True, reasons=[f"no {REMINDER_TOOL} tool"])
    planned = case.messages
    reasons: list[str] = []
    invented: list[list[str]] = []
    if len(messages) < len(planned):
        reasons.append(f"only {len(messages)} of {len(planned)} messages were answered")
    for number, ((_, expect), effects) in enumerate(zip(planned, messages, strict=False), 1):
        prefix = f"turn {number}: " if number < len(planned) else ""
        grounded_check = expect.only_grounded_numbers if expect is not None else case.expect.only_grounded_numbers
        found = invented_numbers(effects.reply, effects.sources) if grounded_check else []
        invented.append(found)
        if found:
            reasons.append(f"{prefix}invented numbers: {', '.join(found)}")
        if effects.error:
            reasons.append(prefix + effects.error)
        if expect is not None:
            reasons += [prefix + reason for reason in check(expect, effects)]
    last = messages[-1] if messages else None
    return CaseResult(case, last, passed=not reasons, reasons=reasons, messages=messages, invented=invented)


def check(expect: Expectation, effects: Effects) -> list[str]:
    """What of `expect` one message's effects do not show (the number-grounding check is `score`'s)."""
    now = effects.sent_at
    assert now is not None, "effects need the virtual time the message was sent"
    today = local(now).date()
    reasons = []
    clarified = effects.outcome == "clarifying"
    if clarified != expect.clarify:
        reasons.append(f"outcome {effects.outcome}, expected {'a' if expect.clarify else 'no'} clarifying question")
    if expect.memories is not None:
        reasons += _match_all(expect.memories, effects.memories, lambda e, r: _memory_problems(e, r, today), "memories")
    missing = [str(n) for n in expect.numbers if not mentions(effects.reply, n)]
    if missing:
        reasons.append(f"reply lacks {', '.join(missing)}")
    if expect.reminders is not None and effects.reminders is not None and effects.reminders != expect.reminders:
        reasons.append(f"{effects.reminders} reminders, expected {expect.reminders}")
    reasons += _memory_state(expect, effects, today)
    reasons += _reminder_state(expect, effects, now)
    reasons += _calendar_state(expect, effects, now)
    if expect.list_items is not None:
        reasons += _match_all(expect.list_items, effects.after.list_items, _list_item_problems, "list items")
    if expect.budgets is not None:
        reasons += _match_all(expect.budgets, effects.after.budgets, _budget_problems, "budgets")
    reasons += _reply_text(expect, effects.reply)
    if expect.charts is not None and effects.charts != expect.charts:
        reasons.append(f"{effects.charts} charts with the reply, expected {expect.charts}")
    if expect.writes_nothing:
        reasons += _writes(effects)
    return reasons


def _writes(effects: Effects) -> list[str]:
    """What the message wrote, when it was to write nothing: each kind of row added, changed or removed."""
    before, after = effects.before, effects.after
    kinds = {
        "memories": (before.memories, after.memories),
        "reminders": (before.reminders, after.reminders),
        "events": (before.events, after.events),
        "list items": (before.list_items, after.list_items),
        "budgets": (before.budgets, after.budgets),
    }
    wrote = [f"{what} written, expected none" for what, (old, new) in kinds.items() if old != new]
    if before.forgotten != after.forgotten:
        wrote.append("a member was forgotten, expected nothing written")
    return wrote


# ---------------------------------------------------------------------------------------------------- memories


def _memory_problems(expected: ExpectedMemory, row: dict[str, Any], today: date) -> list[str]:
    problems = []
    for key in ("kind", "category", "person"):
        allowed = getattr(expected, key)
        if allowed is not None and str(row.get(key) or "").lower() not in {value.lower() for value in allowed}:
            problems.append(f"{key} {row.get(key)!r} not in {allowed}")
    if expected.amount is not None and row.get("amount") != expected.amount:
        problems.append(f"amount {row.get('amount')} != {expected.amount}")
    if expected.currency is not None and row.get("currency") not in expected.currency:
        problems.append(f"currency {row.get('currency')} != {' or '.join(expected.currency)}")
    if expected.no_amount and (row.get("amount") is not None or row.get("currency") is not None):
        problems.append(f"amount {row.get('amount')} {row.get('currency')} stored, expected none")
    if expected.visibility is not None and row.get("visibility") != expected.visibility:
        problems.append(f"visibility {row.get('visibility')} != {expected.visibility}")
    if expected.text_has is not None and not _mentions_text(row, *expected.text_has):
        problems.append(f"text {row.get('content')!r} ({row.get('merchant')}) lacks {' or '.join(expected.text_has)}")
    if expected.occurred is not None:
        day = today if expected.occurred == "today" else today - timedelta(days=1)
        if row.get("local_day") != day:
            problems.append(f"occurred {row.get('local_day')} != {expected.occurred} ({day})")
    return problems


def _match_all(expected: list[Any], rows: list[dict[str, Any]], problems: Any, what: str) -> list[str]:
    """Each expected item must match a distinct row, and there must be no row left over."""
    if len(rows) != len(expected):
        return [f"{len(rows)} new {what}, expected {len(expected)}"]
    unused = list(rows)
    reasons = []
    for wanted in expected:
        fits = [row for row in unused if not problems(wanted, row)]
        if fits:
            unused.remove(fits[0])
        else:
            closest = min(unused, key=lambda row: len(problems(wanted, row)))
            reasons.append("; ".join(problems(wanted, closest)))
    return reasons


def _list_item_problems(expected: ExpectedListItem, row: dict[str, Any]) -> list[str]:
    problems = []
    if not any(needle.casefold() in str(row["text"]).casefold() for needle in expected.text_has):
        problems.append(f"item {row['text']!r} has none of {expected.text_has}")
    if expected.list_name is not None and str(row["list"]).casefold() != expected.list_name.casefold():
        problems.append(f"list {row['list']!r} != {expected.list_name!r}")
    quantity = "".join(str(row["quantity"] or "").split()).casefold()
    if expected.quantity is not None and quantity not in {"".join(q.split()).casefold() for q in expected.quantity}:
        problems.append(f"quantity {row['quantity']!r} not in {expected.quantity}")
    if expected.assignee is not None and row["assignee"] != expected.assignee:
        problems.append(f"assignee {row['assignee']!r} != {expected.assignee}")
    if expected.done is not None and row["done"] != expected.done:
        problems.append(f"{row['text']!r} is {'' if row['done'] else 'not '}ticked")
    return problems


def _budget_problems(expected: ExpectedBudget, row: dict[str, Any]) -> list[str]:
    problems = []
    if str(row["category"]).casefold() not in {c.casefold() for c in expected.category}:
        problems.append(f"budget category {row['category']!r} not in {expected.category}")
    if row["amount"] != expected.amount or row["currency"] != expected.currency:
        problems.append(f"budget {row['amount']} {row['currency']} != {expected.amount} {expected.currency}")
    return problems


def _mentions_text(row: dict[str, Any], *needles: str) -> bool:
    haystack = " ".join(str(row.get(key) or "") for key in ("content", "merchant", "text", "title")).casefold()
    return any(needle.casefold() in haystack for needle in needles)


def _memory_state(expect: Expectation, effects: Effects, today: date) -> list[str]:
    rows = effects.after.memories
    live = [row for row in rows if row["live"]]
    reasons = [_changed(change, effects, today) for change in expect.changed]
    for needle in expect.forgotten:
        matching = [row for row in rows if _mentions_text(row, needle)]
        still = [row for row in matching if row["live"]]
        if not matching:
            reasons.append(f"no memory mentions {needle!r}, expected it forgotten")
        elif still:
            reasons.append(f"{len(still)} memories mentioning {needle!r} still live, expected forgotten")
    for needle in expect.kept:
        matching = [row for row in rows if _mentions_text(row, needle)]
        if not matching or not all(row["live"] for row in matching):
            reasons.append(f"the memory mentioning {needle!r} was forgotten, expected kept")
    if expect.live_memories is not None and len(live) != expect.live_memories:
        reasons.append(f"{len(live)} live memories, expected {expect.live_memories}")
    return [reason for reason in reasons if reason]


def _changed(change: ExpectedChange, effects: Effects, today: date) -> str:
    """'' when a live memory that mentions `content_has` (now, or before the message) has the expected values."""
    needles = change.content_has
    earlier = {row["id"] for row in effects.before.memories if _mentions_text(row, *needles)}
    candidates = [
        row for row in effects.after.memories if row["live"] and (row["id"] in earlier or _mentions_text(row, *needles))
    ]
    name = " or ".join(repr(needle) for needle in needles)
    if not candidates:
        return f"no live memory mentions {name}, expected it changed"
    problems = [_memory_problems(change, row, today) for row in candidates]
    if any(not found for found in problems):
        return ""
    return f"{name} not changed as expected: {'; '.join(min(problems, key=len))}"


# ---------------------------------------------------------------------------------------------------- reminders


def _at_problem(expressions: list[str], instant: datetime | None, now: datetime) -> str:
    if instant is None:
        return f"no next time, expected {' or '.join(expressions)}"
    moments = [resolve(expr, now) for expr in expressions]
    if any(moment.matches(instant) for moment in moments):
        return ""
    pairs = zip(expressions, moments, strict=True)
    wanted = " or ".join(f"{expr} ({moment.local:%a %Y-%m-%d %H:%M})" for expr, moment in pairs)
    return f"at {local(instant):%a %Y-%m-%d %H:%M}, expected {wanted}"


def _upcoming(rule: str, anchor: datetime, now: datetime) -> list[datetime]:
    parsed = rrulestr(rule.removeprefix("RRULE:").strip(), dtstart=anchor)
    found, moment = [], now - timedelta(seconds=1)
    for _ in range(_OCCURRENCES):
        moment = parsed.after(moment)
        if moment is None:
            break
        found.append(moment)
    return found


def _rrule_problem(expected: str | None, row: dict[str, Any], now: datetime) -> str:
    actual = row.get("rrule")
    if expected is None:
        return f"repeats ({actual}), expected a one-off reminder" if actual else ""
    if not actual:
        return f"one-off, expected it to repeat ({expected})"
    first = local(row["next_fire_at"]) if row.get("next_fire_at") else local(now)
    anchor = row.get("dtstart_local") or first
    try:
        same = _upcoming(actual, anchor, local(now)) == _upcoming(expected, first, local(now))
    except (ValueError, TypeError):
        return f"rrule {actual!r} does not parse, expected {expected}"
    return "" if same else f"rrule {actual!r} repeats otherwise than {expected}"


def _reminder_problems(expected: ExpectedReminder, row: dict[str, Any], now: datetime) -> list[str]:
    problems = []
    if expected.at is not None:
        problems.append(_at_problem(expected.at, row.get("next_fire_at"), now))
    if expected.recipient is not None and row["recipients"] != [expected.recipient]:
        problems.append(f"for {', '.join(row['recipients'])}, expected {expected.recipient}")
    problems.append(_rrule_problem(expected.rrule, row, now))
    if expected.text_has is not None and not any(t.casefold() in row["text"].casefold() for t in expected.text_has):
        problems.append(f"text {row['text']!r} lacks {' or '.join(expected.text_has)}")
    if expected.event is not None and (row.get("event_id") is not None) != expected.event:
        problems.append("hangs off an event, expected not" if expected.event is False else "hangs off no event")
    return [problem for problem in problems if problem]


def _status_problems(expected: ExpectedReminderStatus, effects: Effects, now: datetime) -> list[str]:
    earlier = {row["id"] for row in effects.before.reminders if _mentions_text(row, *expected.text_has)}
    rows = [row for row in effects.after.reminders if row["id"] in earlier]
    name = " or ".join(repr(needle) for needle in expected.text_has)
    if not rows:
        return [f"no earlier reminder mentions {name}"]
    problems = []
    for row in rows:
        if row["status"] not in expected.status:
            problems.append(f"reminder {name} is {row['status']}, expected {' or '.join(expected.status)}")
        elif expected.at is not None and (problem := _at_problem(expected.at, row.get("next_fire_at"), now)):
            problems.append(f"reminder {name} {problem}")
        if expected.acknowledged is not None and row.get("acknowledged") != expected.acknowledged:
            said = "was not marked done" if expected.acknowledged else "was marked done, expected not"
            problems.append(f"reminder {name} {said}")
    return problems


def _reminder_state(expect: Expectation, effects: Effects, now: datetime) -> list[str]:
    reasons = []
    new = effects.new_reminders
    if expect.reminder is not None:
        if len(new) != 1:
            reasons.append(f"{len(new)} new reminders, expected 1")
        else:
            reasons += _reminder_problems(expect.reminder, new[0], now)
    if expect.reminder_list is not None:
        reasons += _match_all(expect.reminder_list, new, lambda e, r: _reminder_problems(e, r, now), "reminders")
    for status in expect.reminder_status:
        reasons += _status_problems(status, effects, now)
    return reasons


# ---------------------------------------------------------------------------------------------------- calendar


def _event_problems(expected: ExpectedEvent, row: dict[str, Any], now: datetime) -> list[str]:
    problems = []
    if expected.at is not None:
        problems.append(_at_problem(expected.at, row["starts_at"], now))
    if expected.all_day is not None and row["all_day"] != expected.all_day:
        problems.append("an all-day event" if row["all_day"] else "an event with a time, expected all day")
    if expected.whose is not None and row["whose"] != expected.whose:
        problems.append(f"event for {row['whose']}, expected {expected.whose}")
    if expected.rrule is not None:
        problems.append(_rrule_problem(expected.rrule, {**row, "next_fire_at": row["starts_at"]}, now))
    if expected.title_has is not None and not any(t.casefold() in row["title"].casefold() for t in expected.title_has):
        problems.append(f"title {row['title']!r} lacks {' or '.join(expected.title_has)}")
    return [problem for problem in problems if problem]


def _event_status_problems(expected: ExpectedEventStatus, effects: Effects, now: datetime) -> list[str]:
    earlier = {row["id"] for row in effects.before.events if _mentions_text(row, *expected.title_has)}
    rows = [row for row in effects.after.events if row["id"] in earlier]
    name = " or ".join(repr(needle) for needle in expected.title_has)
    if not rows:
        return [f"no earlier event is titled {name}"]
    problems = []
    for row in rows:
        if row["status"] != expected.status:
            problems.append(f"event {name} is {row['status']}, expected {expected.status}")
        elif expected.at is not None and (problem := _at_problem(expected.at, row["starts_at"], now)):
            problems.append(f"event {name} {problem}")
    return problems


def _calendar_state(expect: Expectation, effects: Effects, now: datetime) -> list[str]:
    """New calendar events (their count, the one expected), earlier ones moved or cancelled, and whether the message
    made a member forgotten."""
    reasons = []
    known = {row["id"] for row in effects.before.events}
    new = [row for row in effects.after.events if row["id"] not in known]
    if expect.events is not None and len(new) != expect.events:
        reasons.append(f"{len(new)} new events, expected {expect.events}")
    if expect.event is not None:
        if len(new) != 1:
            reasons.append(f"{len(new)} new events, expected 1")
        else:
            reasons += _event_problems(expect.event, new[0], now)
    for status in expect.event_status:
        reasons += _event_status_problems(status, effects, now)
    if expect.member_forgotten is not None:
        forgotten = effects.after.forgotten > effects.before.forgotten
        if forgotten != expect.member_forgotten:
            reasons.append("a member was forgotten, expected not" if forgotten else "no member was forgotten")
    return reasons


# ---------------------------------------------------------------------------------------------------- reply


def _reply_text(expect: Expectation, reply: str) -> list[str]:
    reasons = []
    folded = reply.casefold()
    for alternatives in expect.reply_has:
        if not any(text.casefold() in folded for text in alternatives):
            reasons.append(f"reply lacks {' or '.join(repr(t) for t in alternatives)}")
    said = forbidden_numbers(reply, expect.forbid_numbers)
    if said:
        reasons.append(f"reply states forbidden {', '.join(str(n) for n in said)}")
    return reasons
