"""A message's budgets and a household's daily allowance, the prompt version each member is assigned, and a
household's monthly budgets removed by chat (and put back by undo)."""

from __future__ import annotations

import asyncpg

from tests.e2e.scripts import routed_model
from tests.e2e.test_routed import send
from tests.system import Family, make_family, make_settings, running_system


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


async def add_budgets(admin: asyncpg.Connection, family: Family, **amounts: str) -> None:
    for category, amount in amounts.items():
        await admin.execute(
            "INSERT INTO budgets (household_id, category, currency, amount, created_by, updated_by) "
            "VALUES ($1, $2, 'EUR', $3::numeric, $4, $4)",
            family.household_id,
            category,
            amount,
            next(iter(family.user_ids.values())),
        )


async def budgets(admin: asyncpg.Connection, family: Family) -> list[tuple[str, str, str]]:
    rows = await admin.fetch(
        "SELECT category, currency, amount::text FROM budgets WHERE household_id = $1 ORDER BY category",
        family.household_id,
    )
    return [(r["category"], r["currency"], r["amount"]) for r in rows]


async def test_the_budget_the_words_name_is_removed_in_each_language(
    migrated, fake_llm, redis_url, redis, admin_conn
) -> None:
    settings = make_settings(migrated, fake_llm.base_url, redis_url)
    fake_llm.reset()
    family = await make_family(admin_conn, "Removes budgets", {"Anna": "Europe/Berlin"})
    other = await make_family(admin_conn, "Keeps budgets", {"Anna": "Europe/Berlin"})
    await add_budgets(admin_conn, family, groceries="400", clothing="100", restaurants="150", kids="80", fuel="120")
    await add_budgets(admin_conn, other, groceries="300", clothing="50")
    fake_llm.script(routed_model(budget={"category": "kids"}))
    async with running_system(settings, fake_llm, admin_conn) as system:
        english = await send(system, family, "remove the groceries budget")
        german = await send(system, family, "lösch das Budget für Kleidung")
        chinese = await send(system, family, "不要餐饮预算了")
        assert fake_llm.requests == []  # the words named each one: no model call
        told = await send(system, family, "get rid of the budget for the little ones' stuff")  # the model's pick
        assert [r.schema_name for r in fake_llm.requests] == ["route_budget"]
    assert english["reply"] == "Budget removed: groceries (400.00 EUR a month)."
    assert german["reply"] == "Budget entfernt: clothing (100.00 EUR im Monat)."
    assert chinese["reply"] == "已删除预算：restaurants（每月 150.00 EUR）。"
    assert told["reply"] == "Budget removed: kids (80.00 EUR a month)."
    assert await budgets(admin_conn, family) == [("fuel", "EUR", "120.00")]
    assert await budgets(admin_conn, other) == [("clothing", "EUR", "50.00"), ("groceries", "EUR", "300.00")]


async def test_the_only_budget_is_removed_and_undo_puts_it_back(
    migrated, fake_llm, redis_url, redis, admin_conn
) -> None:
    settings = make_settings(migrated, fake_llm.base_url, redis_url)
    fake_llm.reset()
    family = await make_family(admin_conn, "One budget", {"Anna": "Europe/Berlin"})
    await add_budgets(admin_conn, family, groceries="400")
    fake_llm.script(routed_model())
    async with running_system(settings, fake_llm, admin_conn) as system:
        removed = await send(system, family, "we don't need the budget anymore")
        assert removed["reply"] == "Budget removed: groceries (400.00 EUR a month)."
        assert await budgets(admin_conn, family) == []
        undone = await send(system, family, "undo")
    assert undone["outcome"] == "answered"
    assert await budgets(admin_conn, family) == [("groceries", "EUR", "400.00")]
    restored_by = await admin_conn.fetchval(
        "SELECT updated_by FROM budgets WHERE household_id = $1", family.household_id
    )
    assert restored_by == family.user_ids["Anna"]


async def test_several_budgets_none_named_asks_which_and_the_answer_removes_it(
    migrated, fake_llm, redis_url, redis, admin_conn
) -> None:
    settings = make_settings(migrated, fake_llm.base_url, redis_url)
    fake_llm.reset()
    family = await make_family(admin_conn, "Which budget", {"Anna": "Europe/Berlin"})
    await add_budgets(admin_conn, family, groceries="400", fuel="120")
    fake_llm.script(routed_model())  # names none of them: the words name none
    async with running_system(settings, fake_llm, admin_conn) as system:
        asked = await send(system, family, "remove the budget")
        assert asked["outcome"] == "clarifying"
        assert asked["reply"] == "Which budget should I remove: fuel, groceries?"
        assert asked["options"] == ["fuel", "groceries"]
        assert await budgets(admin_conn, family) == [("fuel", "EUR", "120.00"), ("groceries", "EUR", "400.00")]
        answered = await send(system, family, "fuel")
    assert answered["reply"] == "Budget removed: fuel (120.00 EUR a month)."
    assert await budgets(admin_conn, family) == [("groceries", "EUR", "400.00")]


async def test_a_child_asking_to_remove_a_budget_is_refused_and_nothing_changes(
    migrated, fake_llm, redis_url, redis, admin_conn
) -> None:
    settings = make_settings(migrated, fake_llm.base_url, redis_url)
    fake_llm.reset()
    family = await make_family(admin_conn, "Child budget", {"Anna": "Europe/Berlin", "Kid": "Europe/Berlin"})
    await admin_conn.execute("UPDATE users SET role = 'child' WHERE id = $1", family.user_ids["Kid"])
    await add_budgets(admin_conn, family, groceries="400", clothing="100")
    fake_llm.script(routed_model())
    async with running_system(settings, fake_llm, admin_conn) as system:
        refused = await send(system, family, "delete the clothes budget", member="Kid")
    assert "Only adults can change budgets." in refused["reply"]
    assert "removed" not in refused["reply"]
    assert await budgets(admin_conn, family) == [("clothing", "EUR", "100.00"), ("groceries", "EUR", "400.00")]
