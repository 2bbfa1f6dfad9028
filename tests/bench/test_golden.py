"""The golden-set scorer of bench/eval.py, run through the whole system against the scripted model: a case a
competent model passes, the same case failed by a careless one, a question whose number comes from SQL, a
clarifying question, and the golden set itself."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import asyncpg
import pytest

from bot.live import ReplyWaiter
from engine.settings import Settings
from tests.e2e.scripts import GROCERIES_THIS_MONTH, analysis, expense_plan, is_analysis, member_message, tool_results
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, Scripted
from tests.system import System, running_system

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import _golden as g  # noqa: E402

pytestmark = pytest.mark.slow


def careful(request: ChatRequest) -> Scripted:
    if is_analysis(request):
        text = member_message(request)
        if step := expense_plan(text):
            return analysis("record", plan=[step], reply="Saved.")
        if text.startswith("How much did we spend on groceries"):
            return analysis("query", plan=[GROCERIES_THIS_MONTH], needs_results=True)
        return analysis("other", clarification={"question": "What did you pay for, and how much?"})
    [result] = tool_results(request)
    totals = ", ".join(f"{group['value']} {group['currency']}" for group in result["result"]["groups"])
    return Scripted(content=f"You spent {totals} on groceries this month.")


def careless(request: ChatRequest) -> Scripted:
    """Stores expenses in dollars, answers questions from memory, never asks back."""
    if is_analysis(request):
        step = expense_plan(member_message(request)) or expense_plan("I spent 1 dollars on guesses")
        assert step is not None
        step["args"]["currency"] = "USD"
        return analysis("record", plan=[step], reply="Saved.")
    return Scripted(content="About 50 euros.")


@pytest.fixture
async def running(settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection) -> AsyncIterator[System]:
    async with running_system(settings, fake_llm, admin_conn) as system:
        yield system


@pytest.fixture
async def waiter(running: System) -> AsyncIterator[ReplyWaiter]:
    waiter = ReplyWaiter(running.redis)
    await waiter.start()
    yield waiter
    await waiter.stop()


CASES = {case.id: case for case in g.load_cases()}


async def run(running: System, waiter: ReplyWaiter, case_id: str) -> g.CaseResult:
    effects = await g.run_case(running.deps, running.admin, waiter, CASES[case_id], timeout_s=20)
    return g.score(CASES[case_id], effects, today=datetime.now(ZoneInfo(g.TIMEZONE)).date())


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
    assert "1 new memories, expected 0" in question.reasons  # it stored something for a question
    assert not clarify.passed and any("expected a clarifying question" in r for r in clarify.reasons)


async def test_reminder_cases_are_skipped_while_the_tool_is_missing(running: System, waiter: ReplyWaiter) -> None:
    running.llm.script(careful)
    result = await run(running, waiter, "en-reminder-dentist")

    assert result.skipped == ("schedule_reminder" not in running.deps.registry.names())


def test_the_golden_set_is_big_enough_and_covers_both_languages() -> None:
    cases = list(CASES.values())
    assert len(cases) >= 60
    assert {c.category for c in cases} >= {"expense", "health", "plan", "question", "reminder", "ambiguous"}
    assert sum(c.lang == "zh" for c in cases) >= 25
    for case in cases:
        if case.category == "question":
            assert case.seed and case.expect.numbers and case.expect.memories == [], case.id
        if case.expect.clarify:
            assert case.expect.memories == [], case.id


def test_numbers_in_a_reply_are_read_as_written() -> None:
    assert g.reply_numbers("You spent 58.2 EUR, 1,250.00 in total, 3 times.") == {
        Decimal("58.2"),
        Decimal("1250.00"),
        Decimal("3"),
    }
    assert Decimal("58.20") in g.reply_numbers("这个月买菜一共花了58.20元")
