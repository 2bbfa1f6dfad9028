"""A message's budgets and a household's daily allowance, and the prompt version each member is assigned."""

from __future__ import annotations

from tests.e2e.scripts import routed_model
from tests.system import make_family, make_settings, running_system


async def test_tool_call_budget_stops_the_plan_with_an_honest_reply(
    migrated, fake_llm, redis_url, redis, admin_conn
) -> None:
    settings = make_settings(migrated, fake_llm.base_url, redis_url, max_tool_calls=1)
    fake_llm.reset()
    family = await make_family(admin_conn, "Budget", {"Anna": "Europe/Berlin"})
    fake_llm.script(routed_model(reminder={"text": "pay the bill"}))
    two = "I spent 7.20 euros on groceries, and remind me tomorrow at 9 to pay the bill"
    async with running_system(settings, fake_llm, admin_conn) as system:
        response = await system.client.post("/v1/messages", json={"text": two}, headers=family.auth("Anna"))
        body = await response.json()
    assert body["outcome"] == "degraded"
    assert "tool calls budget" in body["reply"]
    reminders = "SELECT count(*) FROM reminders WHERE household_id = $1"
    assert await admin_conn.fetchval(reminders, family.household_id) == 0


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
    fake_llm.script(routed_model(chat={"reply": "Hello!"}))
    talk = {"text": "how are you?"}
    async with running_system(settings, fake_llm, admin_conn) as system:
        over = await (await system.client.post("/v1/messages", json=talk, headers=spent.auth("Anna"))).json()
        assert fake_llm.requests == []  # 21,000 of 20,000 used today: not one more token
        fine = await (await system.client.post("/v1/messages", json=talk, headers=fresh.auth("Anna"))).json()
    assert over["outcome"] == "degraded" and "today's allowance" in over["reply"]
    assert fine["reply"] == "Hello!" and len(fake_llm.requests) == 1  # another household's allowance is its own


async def test_the_prompt_version_each_member_got_is_recorded(migrated, fake_llm, redis_url, redis, admin_conn) -> None:
    settings = make_settings(migrated, fake_llm.base_url, redis_url)
    fake_llm.reset()
    family = await make_family(admin_conn, "Versions", {"Anna": "Europe/Berlin"})
    fake_llm.script(routed_model())
    async with running_system(settings, fake_llm, admin_conn) as system:
        await system.client.post("/v1/messages", json={"text": "how are you?"}, headers=family.auth("Anna"))
    variants = await admin_conn.fetch(
        "SELECT DISTINCT variant FROM experiment_results WHERE household_id = $1", family.household_id
    )
    assert [r["variant"] for r in variants] == ["default"]
