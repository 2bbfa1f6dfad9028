"""Golden cases run through the whole system against the scripted model, on the virtual clock: a case a competent
model passes and a careless one fails by its effects, a question whose number comes from SQL, a clarifying
question, a clarify → answer conversation, a snooze of a reminder that was just sent, and a forget that must
take one row and only that one."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.channels.live import ReplyWaiter
from engine.settings import Settings
from tests.e2e.scripts import routed_model
from tests.fakes.openai_server import ChatRequest, FakeOpenAI
from tests.system import System, make_family, running_system

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import _golden as g  # noqa: E402
import _golden_run as golden_run  # noqa: E402
from _golden_score import score  # noqa: E402
from _golden_time import DEFAULT_START, VirtualClock  # noqa: E402

pytestmark = pytest.mark.slow

CASES = {case.id: case for case in g.load_cases()}


careful = routed_model()  # what a competent model answers each capability


def _every_offered(request: ChatRequest) -> dict[str, Any]:
    assert request.schema is not None
    prop = request.schema["properties"]["memory_ids"]
    return {"memory_ids": [value for value in prop["items"]["enum"] if value is not None][:3]}


# Files money spent as money received, counts where it should add up, and forgets every row it is shown.
careless = routed_model(expense={"kind": "income"}, sum={"op": "count"}, forget=_every_offered)


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
    assert question.effects.llm_calls == 1 and question.effects.memories == []

    running.llm.script(careless)
    expense = await run(running, waiter, "en-expense-groceries")
    question = await run(running, waiter, "en-q-groceries-month")
    assert not expense.passed and any("kind 'income' not in ['expense']" in r for r in expense.reasons)
    assert not question.passed and "reply lacks 58.20" in question.reasons
    assert question.effects is not None and question.effects.memories == []


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
    assert cake["status"] == "active" and len(cake["fired"]) == 1
    snoozed_for = cake["next_fire_at"] - snooze.messages[0].sent_at
    assert snoozed_for.total_seconds() == pytest.approx(600, abs=5)  # 10 minutes on the virtual clock
    live = {row["content"]: row["live"] for row in forget.messages[0].after.memories}
    assert live == {"The wifi password is Tulpe-2026": False, "Lea's shoe size is 31": True, "Groceries at Lidl": True}

    running.llm.script(careless)
    forget = await run(running, waiter, "en-forget-wifi")

    # The words name the wifi password apart from the other rows: the engine forgets that row without asking the
    # model, so a careless one has no say in it.
    assert forget.passed and forget.effects is not None and forget.effects.llm_calls == 0


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
