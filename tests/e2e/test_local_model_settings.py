"""The settings a small local model runs with, end to end against the scripted server: the analysis schema in
llama.cpp's json_object form with every key required, a cap on each answer, and no tools offered to the reply."""

from __future__ import annotations

import asyncpg

from tests.e2e.scripts import (
    GROCERIES_THIS_MONTH,
    analysis,
    expense_plan,
    is_analysis,
    member_message,
    tool_results,
)
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, Scripted
from tests.system import make_family, make_settings, running_system


async def test_a_sum_question_with_local_model_settings(
    migrated, fake_llm: FakeOpenAI, redis_url: str, redis: object, admin_conn: asyncpg.Connection
) -> None:
    settings = make_settings(migrated, fake_llm.base_url, redis_url, variants={"fast": 1})
    local_llm = {"structured_output": "json_object", "native_tools": False, "max_output_tokens": 700}
    settings = settings.model_copy(update={"llm": settings.llm.model_copy(update=local_llm)})
    fake_llm.reset()
    family = await make_family(admin_conn, "Local", {"Anna": "Europe/Berlin"})

    def model(request: ChatRequest) -> Scripted:
        format_ = request.body.get("response_format") or {}
        if format_.get("type") == "json_object":
            if step := expense_plan(member_message(request)):
                return analysis("record", plan=[step], reply="Saved.")
            return analysis("query", plan=[GROCERIES_THIS_MONTH], needs_results=True)
        [result] = tool_results(request)
        return Scripted(content=f"You spent {result['result']['groups'][0]['value']} EUR.")

    fake_llm.script(model)
    async with running_system(settings, fake_llm, admin_conn) as system:
        record = "I spent 35.50 euros on groceries at Lidl"
        await system.client.post("/v1/messages", json={"text": record}, headers=family.auth("Anna"))
        fake_llm.reset()
        response = await system.client.post(
            "/v1/messages", json={"text": "How much did we spend on groceries this month?"}, headers=family.auth("Anna")
        )
        assert (await response.json())["reply"] == "You spent 35.50 EUR."

    analysis_call, reply_call = fake_llm.requests
    schema = analysis_call.body["response_format"]["schema"]
    assert set(schema["required"]) == {"understanding", "context_requests", "clarification", "tool_plan", "response"}
    assert not is_analysis(reply_call) and reply_call.tools is None  # no native tool calls for this model
    assert {call.body["max_tokens"] for call in fake_llm.requests} == {700}
    assert len(analysis_call.messages[0]["content"]) < 3300  # the fast version's short system prompt
