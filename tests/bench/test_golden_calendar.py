"""The golden set's calendar cases (events, "what's on", reminders before an event, forget-me) through the whole
system on the routed engine, with a scripted model that answers each route's small schema competently: every case
passes by its effects, in English, German and Chinese."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.channels.live import ReplyWaiter
from tests.e2e.test_routed import first_choice
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, Scripted
from tests.system import System, routed_system

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import _golden as g  # noqa: E402
import _golden_run as golden_run  # noqa: E402
from _golden_score import score  # noqa: E402
from _golden_time import VirtualClock  # noqa: E402

pytestmark = pytest.mark.slow

CALENDAR = [
    c for c in g.load_cases() if c.category in ("event", "calendar", "event_reminder", "event_change", "forget_me")
]


def competent(request: ChatRequest) -> Scripted:
    route = (request.schema_name or "").removeprefix("route_")
    if route == "fact":
        return Scripted.json({"kind": "plan", "person": None, "category": "plan"})
    if route in ("event_reminder", "event_change"):
        return Scripted.json({"event_id": first_choice(request, "event_id")})
    if route == "route":  # no cue decides: a model that reads a plan with a time as a note for the calendar
        offered = first_choice(request, "route"), *request.schema["properties"]["route"]["enum"]
        return Scripted.json({"route": "fact" if "fact" in offered else offered[0]})
    return Scripted(content="no answer scripted for this schema", status=500)


@pytest.fixture
async def running(
    migrated: Any, fake_llm: FakeOpenAI, redis_url: str, redis: object, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    async with routed_system(migrated, fake_llm, redis_url, admin_conn, clock=VirtualClock()) as system:
        yield system


async def test_the_calendar_cases_pass_on_the_routed_engine(running: System) -> None:
    assert {c.lang for c in CALENDAR} == {"en", "de", "zh"}
    running.llm.script(competent)
    waiter = ReplyWaiter(running.redis)
    await waiter.start()
    failed = {}
    try:
        for case in CALENDAR:
            clock = running.deps.clock
            assert isinstance(clock, VirtualClock)
            messages = await golden_run.run_case(running.deps, running.admin, waiter, case, clock=clock, timeout_s=20)
            result = score(case, messages)
            if not result.passed:
                failed[case.id] = result.reasons
    finally:
        await waiter.stop()
    assert failed == {}
