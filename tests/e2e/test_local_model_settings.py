"""The settings a small local model runs with, end to end against the scripted server: each capability's schema
sent as a llama.cpp grammar (every key, in order, on one line, only the choices offered), a cap on each answer, and
no tools offered."""

from __future__ import annotations

import json

import asyncpg

from bot.ops.local_servers import with_local_endpoints
from tests.fakes.gbnf import grammar_pattern
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, Scripted
from tests.system import make_family, make_settings, running_system

ROUTES = {"I spent 35.50 euros on groceries at Lidl": "expense", "How much did we spend on groceries?": "sum"}
ANSWERS = {
    "expense": {"kind": "expense", "category": "groceries", "merchant": "Lidl"},
    "sum": {"op": "sum", "categories": ["groceries"], "whose": "household", "group_by": "none", "period": "all"},
}


def model(request: ChatRequest) -> Scripted:
    """A constrained model: the router's choice, then the capability's answer, each printed on one line."""
    route = ROUTES[next(text for text in ROUTES if text in request.last_user_text)]
    if '"\\"route\\""' in request.body["grammar"]:
        return Scripted(content=json.dumps({"route": route}))
    return Scripted(content=json.dumps(ANSWERS[route]))


async def test_a_sum_question_with_local_model_settings(
    migrated, fake_llm: FakeOpenAI, redis_url: str, redis: object, admin_conn: asyncpg.Connection
) -> None:
    settings = with_local_endpoints(make_settings(migrated, fake_llm.base_url, redis_url), fake_llm.base_url, None)
    fake_llm.reset()
    family = await make_family(admin_conn, "Local", {"Anna": "Europe/Berlin"})
    fake_llm.script(model)
    async with running_system(settings, fake_llm, admin_conn) as system:
        record, question = ROUTES
        await system.client.post("/v1/messages", json={"text": record}, headers=family.auth("Anna"))
        response = await system.client.post("/v1/messages", json={"text": question}, headers=family.auth("Anna"))
        assert "35.50 EUR" in (await response.json())["reply"]

    calls = fake_llm.requests
    assert calls and all("response_format" not in call.body and call.body["grammar"] for call in calls)
    assert all(call.tools is None and call.body["max_tokens"] == 700 for call in calls)
    assert '"\\"op\\""' in calls[-1].body["grammar"]  # the sum capability's answer
    sum_grammar = grammar_pattern(calls[-1].body["grammar"])
    answer = ANSWERS["sum"]
    assert sum_grammar.fullmatch(json.dumps(answer)) and sum_grammar.fullmatch(json.dumps(answer, indent=None))
    assert not sum_grammar.fullmatch(json.dumps(answer, indent=2))  # no line breaks for the model to spend on
    assert not sum_grammar.fullmatch(json.dumps({**answer, "categories": ["transport"]}))  # the household's only
    assert not sum_grammar.fullmatch(json.dumps({**answer, "whose": "Ben"}))  # a name that is not a member's
