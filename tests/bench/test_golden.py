"""Golden cases run through the whole system against the scripted model, on the virtual clock: a case a competent
model passes and a careless one fails by its effects, a question whose number comes from SQL, a clarifying
question, a clarify → answer conversation, a snooze of a reminder that was just sent, and a forget that must
take one row and only that one."""

from __future__ import annotations

import json
import re
import sys
import uuid
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path

import asyncpg
import pytest

from bot.channels.live import ReplyWaiter
from engine.settings import Settings
from tests.e2e.scripts import GROCERIES_THIS_MONTH, analysis, expense_plan, is_analysis, member_message, tool_results
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, Scripted
from tests.system import System, make_family, running_system

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import _golden as g  # noqa: E402
import _golden_run as golden_run  # noqa: E402
from _golden_score import score  # noqa: E402
from _golden_time import DEFAULT_START, VirtualClock  # noqa: E402

pytestmark = pytest.mark.slow

CASES = {case.id: case for case in g.load_cases()}
_SENT_REMINDER = re.compile(r"^- reminder_id (\d+):", re.M)


def context_of(request: ChatRequest) -> str:
    return str(next(m for m in request.messages if m["role"] == "user")["content"])


def _forget_plan(request: ChatRequest, wanted: str) -> Scripted | None:
    """The second analysis round of "forget …": forget the memories the context round found that mention it."""
    last = str(request.messages[-1]["content"])
    if "Context you asked for (JSON):" not in last:
        return None
    found = json.JSONDecoder().raw_decode(last.split("Context you asked for (JSON):\n", 1)[1])[0]
    ids = [m["memory_id"] for answer in found for m in answer["result"]["memories"] if wanted in m["content"].lower()]
    return analysis("delete", plan=[{"tool": "forget", "args": {"memory_ids": ids}}], reply="Forgotten.")


def careful(request: ChatRequest) -> Scripted:
    """What a competent model plans for the messages of the cases below."""
    if not is_analysis(request):
        [result] = tool_results(request)
        totals = ", ".join(f"{group['value']} {group['currency']}" for group in result["result"]["groups"])
        return Scripted(content=f"You spent {totals} on groceries this month.")
    text = member_message(request)
    if step := expense_plan(text):
        return analysis("record", plan=[step], reply="Saved.")
    if text.startswith("How much did we spend on groceries"):
        return analysis("query", plan=[GROCERIES_THIS_MONTH], needs_results=True)
    if text == "12.99 euros" and "Pending question you asked" in context_of(request):
        args = {"content": "Pharmacy", "kind": "expense", "category": "pharmacy", "amount": "12.99", "currency": "EUR"}
        return analysis("record", plan=[{"tool": "store", "args": args}], reply="Saved 12.99 EUR for the pharmacy.")
    if text == "snooze 10 min" and (sent := _SENT_REMINDER.search(context_of(request))):
        step = {"tool": "snooze_reminder", "args": {"reminder_id": int(sent.group(1)), "minutes": 10}}
        return analysis("update", plan=[step], reply="Snoozed for 10 minutes.")
    if text == "pls forget the wifi password":
        return _forget_plan(request, "wifi") or analysis(
            "delete", context_requests=[{"kind": "semantic_search", "query": "wifi password", "limit": 5}]
        )
    return analysis("other", clarification={"question": "What did you pay for, and how much?"})


def careless(request: ChatRequest) -> Scripted:
    """Stores expenses in dollars, answers questions from memory, never asks back, forgets too much (which waits
    for a yes)."""
    if is_analysis(request):
        text = member_message(request)
        if text.startswith("pls forget"):
            return _forget_plan(request, "") or analysis(
                "delete", context_requests=[{"kind": "semantic_search", "query": text, "limit": 5}]
            )
        step = expense_plan(text) or expense_plan("I spent 1 dollars on guesses")
        assert step is not None
        step["args"]["currency"] = "USD"
        return analysis("record", plan=[step], reply="About 50." if text.startswith("How much") else "Saved.")
    return Scripted(content="About 50 euros.")


@pytest.fixture
async def running(settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection) -> AsyncIterator[System]:
    async with running_system(settings, fake_llm, admin_conn, clock=VirtualClock()) as system:
        yield system


@pytest.fixture
async def waiter(running: System) -> AsyncIterator[ReplyWaiter]:
    waiter = ReplyWaiter(running.redis)
    await waiter.start()
    yield waiter
    await waiter.stop()


async def run(running: System, waiter: ReplyWaiter, case_id: str) -> g.CaseResult:
    clock = running.deps.clock
    assert isinstance(clock, VirtualClock)
    messages = await golden_run.run_case(running.deps, running.admin, waiter, CASES[case_id], clock=clock, timeout_s=20)
    return score(CASES[case_id], messages)


async def test_a_careful_model_passes_and_a_careless_one_fails_by_effects(running: System, waiter: ReplyWaiter) -> None:
    running.llm.script(careful)
    expense = await run(running, waiter, "en-expense-groceries")
    question = await run(running, waiter, "en-q-groceries-month")
    clarify = await run(running, waiter, "en-ambiguous-no-amount")

    assert (expense.passed, question.passed, clarify.passed) == (True, True, True), [
        expense.reasons,
        question.reasons,
        clarify.reasons,
    ]
    assert expense.effects is not None and expense.effects.memories[0]["amount"] == Decimal("35.50")
    assert question.effects is not None and "58.20" in question.effects.reply  # the seeds' sum, from SQL
    assert question.effects.llm_calls == 2 and question.effects.memories == []

    running.llm.script(careless)
    expense = await run(running, waiter, "en-expense-groceries")
    question = await run(running, waiter, "en-q-groceries-month")
    clarify = await run(running, waiter, "en-ambiguous-no-amount")

    assert not expense.passed and expense.reasons == ["currency USD != EUR"]
    assert not question.passed and "reply lacks 58.20" in question.reasons
    # Its store in answer to a question waits for the member's yes (engine/consent.py), so nothing is stored and
    # its made-up "about 50" never reaches the member; the scorer's own tests cover invented numbers.
    assert question.effects is not None and question.effects.memories == []
    assert question.effects.outcome == "clarifying" and "50" not in question.effects.reply
    assert not clarify.passed and any("expected a clarifying question" in r for r in clarify.reasons)


async def test_a_conversation_a_sent_reminder_and_a_forget_through_the_system(
    running: System, waiter: ReplyWaiter
) -> None:
    running.llm.script(careful)

    followup = await run(running, waiter, "en-followup-pharmacy")
    snooze = await run(running, waiter, "en-snooze-fired")
    forget = await run(running, waiter, "en-forget-wifi")

    assert (followup.passed, snooze.passed, forget.passed) == (True, True, True), [
        followup.reasons,
        snooze.reasons,
        forget.reasons,
    ]
    asked, answered = followup.messages
    assert asked.outcome == "clarifying" and answered.memories[0]["amount"] == Decimal("12.99")
    [cake] = snooze.messages[0].after.reminders
    sent_line = f"reminder_id {cake['id']}: 'Take the cake out of the oven'"
    assert any(sent_line in context_of(request) for request in running.llm.requests)  # the engine saw it was sent
    assert cake["status"] == "active" and len(cake["fired"]) == 1
    snoozed_for = cake["next_fire_at"] - snooze.messages[0].sent_at
    assert snoozed_for.total_seconds() == pytest.approx(600, abs=5)  # 10 minutes on the virtual clock
    live = {row["content"]: row["live"] for row in forget.messages[0].after.memories}
    assert live == {"The wifi password is Tulpe-2026": False, "Lea's shoe size is 31": True, "Groceries at Lidl": True}

    running.llm.script(careless)
    forget = await run(running, waiter, "en-forget-wifi")

    # The careless plan forgets every memory: a bulk forget, which waits for a yes (engine/consent.py), so the case
    # fails on the question and nothing is forgotten.
    assert not forget.passed
    assert "outcome clarifying, expected no clarifying question" in forget.reasons
    assert all(row["live"] for row in forget.messages[0].after.memories)


async def test_seed_events_are_in_the_calendar_before_the_first_message(running: System) -> None:
    seeded = g.Case.model_validate(
        {
            "id": "seeded-events",
            "category": "calendar",
            "member": "Ben",
            "seed_events": [
                {"title": "Dentist", "at": "weekday fri 15:00"},
                {"title": "Flohmarkt", "at": "+5d 00:00", "all_day": True, "whose": "household"},
                {"title": "Swimming", "at": "weekday tue 17:30", "whose": "Anna", "rrule": "FREQ=WEEKLY;BYDAY=TU"},
            ],
            "text": "what's on this week?",
            "expect": {},
        }
    )
    name = f"golden-seed-events-{uuid.uuid4().hex[:6]}"
    family = await make_family(running.admin, name, dict.fromkeys(g.MEMBERS, "Europe/Berlin"))

    await golden_run.seed_events(running.deps, family, seeded, DEFAULT_START)

    events = (await golden_run.snapshot(running.admin, family.household_id)).events
    shown = [
        (e["title"], f"{e['starts_at'].astimezone(DEFAULT_START.tzinfo):%a %d %H:%M}", e["all_day"]) for e in events
    ]
    assert shown == [
        ("Dentist", "Fri 27 15:00", False),
        ("Flohmarkt", "Sat 28 00:00", True),
        ("Swimming", "Tue 24 17:30", False),
    ]
    assert [(e["whose"], e["rrule"], e["status"]) for e in events] == [
        ("Ben", None, "confirmed"),
        ("household", None, "confirmed"),
        ("Anna", "FREQ=WEEKLY;BYDAY=TU", "confirmed"),
    ]
    sources = golden_run.seed_sources(seeded, DEFAULT_START)
    assert "Flohmarkt" in sources.texts and len(sources.moments) == 4  # the start and each event's
