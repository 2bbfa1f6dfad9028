"""Exactly once through crashes, retries, invalid model output and failing endpoints."""

from __future__ import annotations

import asyncio
import gc
import json

import pytest

from engine.pipeline import Engine
from tests.e2e.scripts import routed_model, routed_words
from tests.fakes.openai_server import ChatRequest, Scripted
from tests.system import System, accept_unqueued, make_family
from tools.storage import inbox
from worker.jobs import handle_inbound


async def count(system: System, table: str, household_id: int) -> int:
    return await system.admin.fetchval(f"SELECT count(*) FROM {table} WHERE household_id = $1", household_id)


# Killing the job mid-request leaves the HTTP client's half-used socket to the garbage collector.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning", "ignore::ResourceWarning")
def asked(system: System, text: str, route: str = "expense") -> int:
    """The capability's calls for one message: the system's worker may meanwhile answer rows other tests left."""
    return sum(r.schema_name == f"route_{route}" and routed_words(r) == text for r in system.llm.requests)


async def test_job_killed_after_its_tool_effect_replays_on_retry(system: System) -> None:
    """The first run stores the expense, then dies while the model answers the message's second request; the retry
    neither asks the model about the expense again nor stores a second memory."""
    family = await make_family(system.admin, "Crash", {"Anna": "Europe/Berlin"})
    respond_started = asyncio.Event()
    answer = routed_model(reminder={"text": "pay the bill"})

    async def model(request: ChatRequest) -> Scripted:
        if request.schema_name == "route_reminder" and not respond_started.is_set():
            respond_started.set()
            return Scripted(content="{}", delay_s=2.0)
        return answer(request)

    system.llm.script(model)
    text = "I spent 7.20 euros on groceries"
    row = await accept_unqueued(
        system.deps, family, "Anna", "crash-1", f"{text}, and remind me tomorrow at 9 to pay the bill"
    )
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
    assert await count(system, "reminders", family.household_id) == 1
    assert await count(system, "outbox", family.household_id) == 1
    async with system.deps.db.household(family.household_id) as conn:
        finished = await inbox.get(conn, row.id)
    assert finished is not None and finished.status == "done" and finished.attempts == 2


async def test_an_invalid_answer_is_repaired_once(system: System) -> None:
    family = await make_family(system.admin, "Repair", {"Anna": "Europe/Berlin"})
    answers = iter([Scripted(content='{"kind": "expense", "category": ["store it"]}')])
    answer = routed_model()

    def model(request: ChatRequest) -> Scripted:
        bad = next(answers, None)
        if bad is not None:
            return bad
        assert "not valid" in request.messages[-1]["content"]
        return answer(request)

    system.llm.script(model)
    response = await system.client.post(
        "/v1/messages", json={"text": "I spent 3 euros on groceries"}, headers=family.auth("Anna")
    )
    body = await response.json()
    assert "3.00 EUR" in body["reply"]
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
    chat = Scripted(content='{"reply": "I am well, thank you."}', reasoning="A friendly question.")
    system.llm.script(routed_model(chat=chat))
    summed = await stream(system, family.auth("Anna"), "How much did we spend on groceries this month?")
    talked = await stream(system, family.auth("Anna"), "how are you?")

    for events in (summed, talked):
        names = [name for name, _ in events]
        assert names[0] == "stream_start" and names[-1] == "stream_end" and "session_stats" in names
    names = [name for name, _ in summed]  # a reply from a phrase template arrives whole, with the message
    assert names.index("tool_use") < names.index("tool_result") < names.index("session_stats")
    names = [name for name, _ in talked]
    assert names.index("thinking") < names.index("content_delta")
    assert "".join(data["text"] for name, data in talked if name == "content_delta") == "I am well, thank you."


async def stream(system: System, auth: dict[str, str], text: str) -> list[tuple[str, dict]]:
    response = await system.client.post("/v1/messages/stream", json={"text": text}, headers=auth)
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/event-stream")
    events = []
    for block in (await response.text()).strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events
