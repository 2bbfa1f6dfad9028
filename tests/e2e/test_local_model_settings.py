"""The settings a small local model runs with, end to end against the scripted server: each capability's schema in
llama.cpp's json_object form with every key required, a cap on each answer, and no tools offered."""

from __future__ import annotations

import asyncpg

from tests.e2e.scripts import routed_model
from tests.fakes.openai_server import FakeOpenAI
from tests.system import make_family, make_settings, running_system


async def test_a_sum_question_with_local_model_settings(
    migrated, fake_llm: FakeOpenAI, redis_url: str, redis: object, admin_conn: asyncpg.Connection
) -> None:
    settings = make_settings(migrated, fake_llm.base_url, redis_url)
    local_llm = {"structured_output": "json_object", "max_output_tokens": 700}
    settings = settings.model_copy(update={"llm": settings.llm.model_copy(update=local_llm)})
    fake_llm.reset()
    family = await make_family(admin_conn, "Local", {"Anna": "Europe/Berlin"})
    fake_llm.script(routed_model())
    async with running_system(settings, fake_llm, admin_conn) as system:
        record = "I spent 35.50 euros on groceries at Lidl"
        await system.client.post("/v1/messages", json={"text": record}, headers=family.auth("Anna"))
        fake_llm.reset()
        response = await system.client.post(
            "/v1/messages", json={"text": "How much did we spend on groceries this month?"}, headers=family.auth("Anna")
        )
        assert "35.50 EUR" in (await response.json())["reply"]

    [sum_call] = fake_llm.requests
    response_format = sum_call.body["response_format"]
    assert response_format["type"] == "json_object"
    schema = response_format["schema"]
    assert set(schema["required"]) == set(schema["properties"]) >= {"op", "categories", "period"}
    assert schema["properties"]["categories"]["items"]["enum"] == ["groceries"]  # the household's categories
    assert sum_call.tools is None  # no native tool calls for this model
    assert sum_call.body["max_tokens"] == 700
