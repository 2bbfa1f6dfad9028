"""The user stories of the backbone, end to end over HTTP."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import structlog.contextvars
import structlog.testing

from engine.capabilities.phrases import say
from tests.e2e.scripts import routed_model
from tests.system import System, make_family

family_model = routed_model()  # a model that fills each capability's answer from the member's words


async def send(system: System, auth: dict[str, str], text: str, **extra: object) -> dict:
    response = await system.client.post("/v1/messages", json={"text": text, **extra}, headers=auth)
    assert response.status == 200, await response.text()
    return await response.json()


async def test_simple_record_stores_one_memory_with_one_llm_call(system: System) -> None:
    family = await make_family(system.admin, "Miller", {"Anna": "Europe/Berlin"})
    system.llm.script(family_model)

    body = await send(system, family.auth("Anna"), "I spent 35.50 euros on groceries at Lidl")

    assert body["reply"] == "Saved: groceries (Lidl), 35.50 EUR."
    assert body["outcome"] == "answered"
    rows = await system.admin.fetch(
        "SELECT amount, currency, ai_understanding->>'category' AS category, author_id FROM memories "
        "WHERE household_id = $1",
        family.household_id,
    )
    assert len(rows) == 1
    assert rows[0]["amount"] == Decimal("35.50")
    assert rows[0]["currency"] == "EUR"
    assert rows[0]["category"] == "groceries"
    assert rows[0]["author_id"] == family.user_ids["Anna"]
    assert len(system.llm.requests) == 1


async def test_question_gets_the_exact_sql_sum_in_one_llm_call(system: System) -> None:
    family = await make_family(system.admin, "Sums", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    system.llm.script(family_model)
    for who, text in [
        ("Anna", "I spent 35.50 euros on groceries"),
        ("Ben", "I spent 12.25 euros on groceries"),
        ("Anna", "I spent 0.10 euros on groceries"),
        ("Ben", "I spent 99 euros on fuel"),
    ]:
        await send(system, family.auth(who), text)
    system.llm.reset()

    body = await send(system, family.auth("Ben"), "How much did we spend on groceries this month?")

    truth = await system.admin.fetchval(
        "SELECT sum(amount) FROM memories WHERE household_id = $1 AND ai_understanding->>'category' = 'groceries'",
        family.household_id,
    )
    assert truth == Decimal("47.85")
    assert "47.85 EUR" in body["reply"]
    assert len(system.llm.requests) == 1


async def test_semantic_question_is_answered_from_the_households_memories(system: System) -> None:
    family = await make_family(system.admin, "Health", {"Anna": "Europe/Berlin"})
    system.llm.script(family_model)
    for text in [
        "Anna likes green tea in the morning",
        "Tom is allergic to peanuts, the doctor said to carry an epipen",
        "The bike needs new brakes",
    ]:
        await send(system, family.auth("Anna"), text)

    body = await send(system, family.auth("Anna"), "What did the doctor say about Tom's allergy?")

    assert "peanuts" in body["reply"]


async def test_ambiguous_message_gets_one_question_and_the_answer_resumes_it(system: System) -> None:
    family = await make_family(system.admin, "Vague", {"Anna": "Europe/Berlin"})
    system.llm.script(family_model)

    asked = await send(system, family.auth("Anna"), "add 20 for the thing")
    assert asked["outcome"] == "clarifying"
    assert asked["reply"] == say("ask_what", "en")
    assert (
        await system.admin.fetchval("SELECT count(*) FROM memories WHERE household_id = $1", family.household_id) == 0
    )

    answered = await send(system, family.auth("Anna"), "groceries, in euros")

    assert "20.00 EUR" in answered["reply"]
    assert await system.admin.fetchval(
        "SELECT amount FROM memories WHERE household_id = $1", family.household_id
    ) == Decimal("20.00")
    assert (
        await system.admin.fetchval(
            "SELECT count(*) FROM pending_clarifications WHERE user_id = $1", family.user_ids["Anna"]
        )
        == 0
    )


async def test_three_simultaneous_duplicates_make_one_memory_and_one_reply(system: System) -> None:
    family = await make_family(system.admin, "Dupes", {"Anna": "Europe/Berlin"})
    system.llm.script(family_model)
    payload = {"text": "I spent 9.99 euros on groceries", "client_message_id": "phone-42"}

    responses = await asyncio.gather(
        *(system.client.post("/v1/messages", json=payload, headers=family.auth("Anna")) for _ in range(3))
    )

    bodies = [await r.json() for r in responses]
    assert {b["message_id"] for b in bodies} == {bodies[0]["message_id"]}
    assert {b["reply"] for b in bodies} == {"Saved: groceries, 9.99 EUR."}
    assert sorted(b["duplicate"] for b in bodies) == [False, True, True]
    hid = family.household_id
    assert await system.admin.fetchval("SELECT count(*) FROM memories WHERE household_id = $1", hid) == 1
    assert await system.admin.fetchval("SELECT count(*) FROM inbox WHERE household_id = $1", hid) == 1
    assert await system.admin.fetchval("SELECT count(*) FROM outbox WHERE household_id = $1", hid) == 1
    assert len(system.llm.requests) == 1


async def test_households_never_see_each_other(system: System) -> None:
    miller = await make_family(system.admin, "Iso-A", {"Anna": "Europe/Berlin"})
    smith = await make_family(system.admin, "Iso-B", {"Sam": "America/New_York"})
    system.llm.script(family_model)
    await send(system, miller.auth("Anna"), "I spent 35.50 euros on groceries")
    await send(system, miller.auth("Anna"), "Tom is allergic to peanuts, the doctor said to carry an epipen")

    total = await send(system, smith.auth("Sam"), "How much did we spend on groceries this month?")
    doctor = await send(system, smith.auth("Sam"), "What did the doctor say about Tom's allergy?")

    assert "35.50" not in total["reply"] and "peanuts" not in doctor["reply"]
    assert doctor["reply"] == say("not_found", "en")
    mine = (await send(system, miller.auth("Anna"), "How much did we spend on groceries this month?"))["message_id"]
    foreign = await system.client.get(f"/v1/messages/{mine}", headers=smith.auth("Sam"))
    assert foreign.status == 404


async def test_logs_name_the_steps_carry_the_trace_and_never_the_message_text(system: System) -> None:
    family = await make_family(system.admin, "Logs", {"Anna": "Europe/Berlin"})
    system.llm.script(family_model)
    secret = "I spent 66.60 euros on pharmacy at Apotheke"

    with structlog.testing.capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        await system.client.post(
            "/v1/messages", json={"text": secret}, headers={**family.auth("Anna"), "X-Request-ID": "trace-xyz"}
        )

    names = {entry["event"] for entry in logs}
    for expected in (
        "message.received",
        "step1.preprocess.completed",
        "step3.analysis.completed",
        "llm.response.summary",
        "tool.call.completed",
        "step5.execution.completed",
        "step6.record.completed",
    ):
        assert expected in names
    for entry in logs:
        if entry["event"] in ("tool.call.completed", "step6.record.completed", "message.received"):
            assert entry["trace_id"] == "trace-xyz"
        if entry["event"].startswith("step"):
            assert "duration_ms" in entry
        if entry["log_level"] != "debug":
            assert "66.60" not in repr(entry) and "Apotheke" not in repr(entry)
