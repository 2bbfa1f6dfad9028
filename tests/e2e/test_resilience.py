"""Exactly once through crashes, retries, invalid model output and failing endpoints."""

from __future__ import annotations

import asyncio
import gc
import json

import pytest

from engine.pipeline import Engine
from tests.e2e.scripts import analysis, expense_plan, is_analysis, member_message, tool_results
from tests.fakes.openai_server import ChatRequest, Scripted
from tests.system import System, accept_unqueued, make_family
from tools.storage import inbox
from worker.jobs import handle_inbound


async def count(system: System, table: str, household_id: int) -> int:
    return await system.admin.fetchval(f"SELECT count(*) FROM {table} WHERE household_id = $1", household_id)


# Killing the job mid-request leaves the HTTP client's half-used socket to the garbage collector.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning", "ignore::ResourceWarning")
def asked(system: System, text: str) -> int:
    """The analysis calls for one message: the system's worker may meanwhile answer rows other tests left."""
    return sum(is_analysis(r) and member_message(r) == text for r in system.llm.requests)


async def test_job_killed_after_its_tool_effect_replays_on_retry(system: System) -> None:
    """The first run stores the memory, then dies while the reply is being written; the retry neither calls the
    analysis again nor stores a second memory."""
    family = await make_family(system.admin, "Crash", {"Anna": "Europe/Berlin"})
    respond_started = asyncio.Event()

    async def model(request: ChatRequest) -> Scripted:
        if is_analysis(request):
            step = expense_plan(member_message(request))
            return analysis("record", plan=[step], needs_results=True)
        respond_started.set()
        return Scripted(content="Saved it.", delay_s=2.0)

    system.llm.script(model)
    text = "I spent 7.20 euros on groceries"
    row = await accept_unqueued(system.deps, family, "Anna", "crash-1", text)
    ctx = {"deps": system.deps, "engine": Engine(system.deps), "job_try": 1}

    first = asyncio.create_task(handle_inbound(ctx, row.id, family.household_id))
    await asyncio.wait_for(respond_started.wait(), 10)
    assert await count(system, "memories", family.household_id) == 1
    first.cancel()  # the worker dies here: effect committed, reply not yet
    await asyncio.gather(first, return_exceptions=True)
    gc.collect()
    analysis_calls = asked(system, text)

    outcome = await handle_inbound({**ctx, "job_try": 2}, row.id, family.household_id)

    assert outcome == "answered"
    assert asked(system, text) == analysis_calls == 1
    assert await count(system, "memories", family.household_id) == 1
    assert await count(system, "outbox", family.household_id) == 1
    async with system.deps.db.household(family.household_id) as conn:
        finished = await inbox.get(conn, row.id)
    assert finished is not None and finished.status == "done" and finished.attempts == 2


async def test_invalid_analysis_is_repaired_once(system: System) -> None:
    family = await make_family(system.admin, "Repair", {"Anna": "Europe/Berlin"})
    answers = iter([Scripted(content='{"understanding": {"intent": "record"}, "tool_plan": "store it"}')])

    def model(request: ChatRequest) -> Scripted:
        if is_analysis(request):
            bad = next(answers, None)
            if bad is not None:
                return bad
            assert "not valid" in request.messages[-1]["content"]
            step = expense_plan(member_message(request))
            return analysis("record", plan=[step], reply="Saved.")
        return Scripted(content="unused")

    system.llm.script(model)
    response = await system.client.post(
        "/v1/messages", json={"text": "I spent 3 euros on groceries"}, headers=family.auth("Anna")
    )
    body = await response.json()
    assert body["reply"] == "Saved."
    assert asked(system, "I spent 3 euros on groceries") == 2
    assert await count(system, "memories", family.household_id) == 1


async def test_analysis_still_invalid_after_repair_fails_politely(system: System) -> None:
    family = await make_family(system.admin, "Garbage", {"Anna": "Europe/Berlin"})
    system.llm.script(lambda request: Scripted(content="I think you spent some money!"))

    response = await system.client.post(
        "/v1/messages", json={"text": "I spent 3 euros on groceries"}, headers=family.auth("Anna")
    )

    body = await response.json()
    assert body["outcome"] == "failed"
    assert "try again" in body["reply"]
    assert asked(system, "I spent 3 euros on groceries") == 2
    status, error = await system.admin.fetchrow("SELECT status, error FROM inbox WHERE id = $1", body["message_id"])
    assert status == "failed"
    assert error.startswith("analysis:")
    assert await count(system, "memories", family.household_id) == 0


async def test_tool_validation_error_goes_back_to_the_model(system: System) -> None:
    family = await make_family(system.admin, "Fixit", {"Anna": "Europe/Berlin"})
    seen_errors: list[dict] = []

    def model(request: ChatRequest) -> Scripted:
        if is_analysis(request):
            step = {
                "tool": "store",
                "args": {
                    "content": "lunch",
                    "kind": "expense",
                    "amount": "twelve",
                    "currency": "EUR",
                    "category": "food",
                },
            }
            return analysis("record", plan=[step], reply="Saved 12 EUR.")
        if request.messages[-1]["role"] == "tool":
            return Scripted(content="Saved 12.00 EUR for lunch.")
        seen_errors.extend(r for r in tool_results(request) if not r["ok"])
        fixed = {"content": "lunch", "kind": "expense", "amount": "12", "currency": "EUR", "category": "food"}
        return Scripted(tool_calls=[("store", fixed)])

    system.llm.script(model)
    response = await system.client.post(
        "/v1/messages", json={"text": "lunch was twelve euros"}, headers=family.auth("Anna")
    )

    body = await response.json()
    assert body["reply"] == "Saved 12.00 EUR for lunch."
    assert seen_errors and seen_errors[0]["fixable"] is True and "amount" in seen_errors[0]["error"]
    assert (
        await system.admin.fetchval("SELECT amount::text FROM memories WHERE household_id = $1", family.household_id)
        == "12.00"
    )


async def test_llm_down_retries_then_replies_politely_and_keeps_the_message(system: System) -> None:
    family = await make_family(system.admin, "Outage", {"Anna": "Europe/Berlin"})
    system.llm.script(lambda request: Scripted(status=503))
    row = await accept_unqueued(system.deps, family, "Anna", "outage-1", "I spent 3 euros on groceries")
    engine = Engine(system.deps)
    outcomes = []
    for job_try in (1, 2, 3):
        try:
            outcomes.append(
                await handle_inbound(
                    {"deps": system.deps, "engine": engine, "job_try": job_try}, row.id, family.household_id
                )
            )
        except Exception as exc:  # arq's Retry
            outcomes.append(type(exc).__name__)
    assert outcomes == ["Retry", "Retry", "failed"]
    reply = await system.admin.fetchrow("SELECT text, payload FROM outbox WHERE inbox_id = $1", row.id)
    assert "try again" in reply["text"]
    assert await system.admin.fetchval("SELECT text FROM inbox WHERE id = $1", row.id) == "I spent 3 euros on groceries"


async def test_streaming_endpoint_emits_the_event_protocol(system: System) -> None:
    family = await make_family(system.admin, "Stream", {"Anna": "Europe/Berlin"})

    def model(request: ChatRequest) -> Scripted:
        if is_analysis(request):
            plan = {"tool": "aggregate", "args": {"op": "count"}}
            return analysis("query", plan=[plan], needs_results=True)
        return Scripted(content="You have stored nothing yet, so the count is 0.", reasoning="Count is zero.")

    system.llm.script(model)
    response = await system.client.post(
        "/v1/messages/stream", json={"text": "how many memories?"}, headers=family.auth("Anna")
    )
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/event-stream")
    events = []
    for block in (await response.text()).strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    names = [name for name, _ in events]
    assert names[0] == "stream_start" and names[-1] == "stream_end"
    for expected in ("tool_use", "tool_result", "thinking", "content_delta", "session_stats"):
        assert expected in names
    text = "".join(data["text"] for name, data in events if name == "content_delta")
    assert text == "You have stored nothing yet, so the count is 0."
    assert names.index("tool_use") < names.index("tool_result") < names.index("content_delta")
