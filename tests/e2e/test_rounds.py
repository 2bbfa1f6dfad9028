"""Analysis rounds with context requests, prompt versions, and budgets."""

from __future__ import annotations

from tests.e2e.scripts import analysis, is_analysis, member_message
from tests.fakes.openai_server import ChatRequest, Scripted
from tests.system import System, make_family, make_settings, running_system


async def test_model_asks_for_context_then_answers_in_the_second_round(system: System) -> None:
    family = await make_family(system.admin, "Rounds", {"Anna": "Europe/Berlin"})

    def model(request: ChatRequest) -> Scripted:
        text = member_message(request)
        if text.startswith("Remember"):
            return analysis("record", plan=[{"tool": "store", "args": {"content": text, "kind": "fact"}}], reply="Ok.")
        if "Context you asked for" in request.messages[-1]["content"]:
            found = "Wi-Fi password is tulip42" in request.messages[-1]["content"]
            return analysis("query", reply="It's tulip42." if found else "I don't know.")
        return analysis("query", context_requests=[{"kind": "semantic_search", "query": "wifi password", "limit": 3}])

    system.llm.script(model)
    for text in ("Remember: the Wi-Fi password is tulip42", "Remember: the car is blue"):
        await system.client.post("/v1/messages", json={"text": text}, headers=family.auth("Anna"))
    system.llm.reset()

    response = await system.client.post(
        "/v1/messages", json={"text": "what's the wifi password?"}, headers=family.auth("Anna")
    )

    assert (await response.json())["reply"] == "It's tulip42."
    assert len(system.llm.requests) == 2
    rounds = await system.admin.fetchval(
        "SELECT rounds FROM experiment_results r JOIN interactions i ON i.id = r.interaction_id WHERE i.inbox_id = $1",
        (await response.json())["message_id"],
    )
    assert rounds == 2


async def test_fast_version_keeps_one_round_and_a_minimal_context(
    migrated, fake_llm, redis_url, redis, admin_conn
) -> None:
    settings = make_settings(migrated, fake_llm.base_url, redis_url, variants={"fast": 1})
    fake_llm.reset()
    family = await make_family(admin_conn, "Fast", {"Anna": "Europe/Berlin"})
    fake_llm.script(
        lambda request: analysis("query", context_requests=[{"kind": "recent_memories"}], reply="Nothing stored yet.")
    )
    async with running_system(settings, fake_llm, admin_conn) as system:
        for text in ("first", "second"):
            response = await system.client.post("/v1/messages", json={"text": text}, headers=family.auth("Anna"))
            assert (await response.json())["reply"] == "Nothing stored yet."
    assert len(fake_llm.requests) == 2  # one round each, although the model asked for more context
    assert "Recent conversation" not in fake_llm.requests[-1].all_text
    variants = await admin_conn.fetch(
        "SELECT DISTINCT variant FROM experiment_results WHERE household_id = $1", family.household_id
    )
    assert [r["variant"] for r in variants] == ["fast"]


async def test_tool_call_budget_stops_the_plan_with_an_honest_reply(
    migrated, fake_llm, redis_url, redis, admin_conn
) -> None:
    settings = make_settings(migrated, fake_llm.base_url, redis_url, max_tool_calls=1)
    fake_llm.reset()
    family = await make_family(admin_conn, "Budget", {"Anna": "Europe/Berlin"})
    plan = [{"tool": "aggregate", "args": {"op": "count"}}, {"tool": "aggregate", "args": {"op": "count"}}]
    fake_llm.script(
        lambda request: (
            analysis("query", plan=plan, needs_results=True) if is_analysis(request) else Scripted(content="unused")
        )
    )
    async with running_system(settings, fake_llm, admin_conn) as system:
        response = await system.client.post("/v1/messages", json={"text": "count twice"}, headers=family.auth("Anna"))
        body = await response.json()
    assert body["outcome"] == "degraded"
    assert "tool calls budget" in body["reply"]


async def test_a_household_over_its_daily_allowance_gets_a_note_and_no_model_call(
    migrated, fake_llm, redis_url, redis, admin_conn
) -> None:
    settings = make_settings(migrated, fake_llm.base_url, redis_url, household_daily_tokens=20_000)
    fake_llm.reset()
    spent = await make_family(admin_conn, "Spent", {"Anna": "Asia/Shanghai"})
    fresh = await make_family(admin_conn, "Fresh", {"Anna": "Asia/Shanghai"})
    for tokens_in, created_at in ((15_000, "now()"), (6_000, "now()"), (50_000, "now() - interval '2 days'")):
        await admin_conn.execute(
            "INSERT INTO interactions (household_id, user_id, channel, user_text, reply_text, outcome, tokens_in, "
            f"created_at) VALUES ($1, $2, 'web', 'q', 'a', 'answered', $3, {created_at})",
            spent.household_id,
            spent.user_ids["Anna"],
            tokens_in,
        )
    fake_llm.script(lambda request: analysis("chat", reply="Hello!"))
    async with running_system(settings, fake_llm, admin_conn) as system:
        over = await (await system.client.post("/v1/messages", json={"text": "hi"}, headers=spent.auth("Anna"))).json()
        assert fake_llm.requests == []  # 21,000 of 20,000 used today: not one more token
        fine = await (await system.client.post("/v1/messages", json={"text": "hi"}, headers=fresh.auth("Anna"))).json()
    assert over["outcome"] == "degraded" and "today's allowance" in over["reply"]
    assert fine["reply"] == "Hello!" and len(fake_llm.requests) == 1  # another household's allowance is its own
