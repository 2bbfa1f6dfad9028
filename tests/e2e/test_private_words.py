"""On the planner path, who sees a stored row follows the member's words, not the model: "only for me" keeps it
private, "a surprise for Sam" keeps it from Sam, and the reply says so. Hints written for the model never reach
the member."""

from __future__ import annotations

from typing import Any

from tests.e2e.scripts import analysis, is_analysis, member_message
from tests.e2e.test_calendar import routed  # noqa: F401 (fixture)
from tests.e2e.test_routed import answers, send
from tests.fakes.openai_server import ChatRequest, Scripted
from tests.system import System, make_family


def careless(tool: str, args: dict[str, Any], *, native: bool = False) -> object:
    """A model that stores what it is told for the whole household, whatever the member said: in its plan, or
    (`native`) with a tool call while writing the reply."""

    def model(request: ChatRequest) -> Scripted:
        text = member_message(request)
        call = {"tool": tool, "args": {**args, "visibility": "household"}}
        if is_analysis(request):
            return analysis("record", plan=[] if native else [call], reply=None if native else "Saved.")
        if native and not any(m["role"] == "tool" for m in request.messages):
            return Scripted(tool_calls=[(tool, {**args, "content": text} if tool == "store" else args)])
        return Scripted(content="Saved.")

    return model


async def test_only_for_me_keeps_a_memory_private_whatever_the_model_set(system: System) -> None:
    family = await make_family(system.admin, "PrivateWords", {"Alex": "Europe/Berlin", "Sam": "Europe/Berlin"})
    text = "Private, only for me: I am planning a surprise birthday party for Sam on December 12"
    system.llm.script(careless("store", {"content": text, "kind": "note"}))

    body = await (await system.client.post("/v1/messages", json={"text": text}, headers=family.auth("Alex"))).json()

    row = await system.admin.fetchrow(
        "SELECT visibility, hidden_from, author_id FROM memories WHERE household_id = $1", family.household_id
    )
    assert dict(row) == {"visibility": "private", "hidden_from": None, "author_id": family.user_ids["Alex"]}
    assert body["reply"] == "Saved.\n\nKept private — only you see this."


async def test_a_surprise_for_sam_is_an_event_sam_does_not_see(system: System) -> None:
    family = await make_family(system.admin, "Surprise", {"Alex": "Europe/Berlin", "Sam": "Europe/Berlin"})
    system.llm.script(careless("add_event", {"title": "Party", "start": "2026-12-12T19:00"}))

    body = await (
        await system.client.post(
            "/v1/messages", json={"text": "Überraschungsparty für Sam am 12.12. um 19 Uhr"}, headers=family.auth("Alex")
        )
    ).json()

    hidden = await system.admin.fetchval("SELECT hidden_from FROM events WHERE household_id = $1", family.household_id)
    assert hidden == family.user_ids["Sam"]
    assert body["reply"].endswith("Sam sieht das nicht.")


async def test_a_native_store_while_replying_follows_the_words_too(system: System) -> None:
    family = await make_family(system.admin, "NativePrivate", {"Mia": "Europe/Berlin", "Sam": "Europe/Berlin"})
    system.llm.script(careless("store", {"kind": "note"}, native=True))

    body = await (
        await system.client.post(
            "/v1/messages", json={"text": "私密：我的储物柜密码是4312"}, headers=family.auth("Mia")
        )
    ).json()

    visibility = await system.admin.fetchval(
        "SELECT visibility FROM memories WHERE household_id = $1", family.household_id
    )
    assert visibility == "private"
    assert body["reply"].endswith("已设为私密——只有您能看到。")


async def test_a_reply_that_quotes_the_models_hint_reaches_the_member_as_a_plain_account(system: System) -> None:
    family = await make_family(system.admin, "Hints", {"Anna": "Europe/Berlin"})

    def model(request: ChatRequest) -> Scripted:
        if is_analysis(request):
            plan = [{"tool": "cancel_reminder", "args": {"reminder_id": 999999}}]
            return analysis("update", plan=plan, needs_results=True)
        return Scripted(content="I could not: list_reminders shows the reminder_ids.")

    system.llm.script(model)

    body = await (
        await system.client.post("/v1/messages", json={"text": "cancel my reminder"}, headers=family.auth("Anna"))
    ).json()

    assert "reminder_ids" not in body["reply"] and "list_reminders" not in body["reply"]
    assert "cancelling the reminder (it is not there)" in body["reply"]


# The routed engine (the default for a local model) reads the same words -----------------------------------------


async def test_on_the_routed_engine_private_words_keep_notes_and_events_from_the_others(routed: System) -> None:  # noqa: F811
    family = await make_family(
        routed.admin, "Routed private", {"Alex": "Europe/Berlin", "Sam": "Europe/Berlin", "Mia": "Europe/Berlin"}
    )
    # A careless model answers every note as the household's: the words alone decide.
    routed.llm.script(answers(fact={"kind": "plan", "person": "Sam", "category": "birthday"}))
    party = await send(
        routed,
        family,
        "Private, only for me: I am planning a surprise birthday party for Sam on December 12 at 7pm",
        member="Alex",
    )
    routed.llm.script(answers(fact={"kind": "fact", "person": None, "category": "school"}))
    locker = await send(routed, family, "Remember that my locker code is 4312, keep it private", member="Mia")
    routed.llm.script(answers(fact={"kind": "plan", "person": "Sam", "category": "birthday"}))
    surprise = await send(routed, family, "Überraschungsparty für Sam am 12.12. um 19 Uhr", member="Alex")

    assert party["reply"].endswith("Kept private — only you see this."), party
    assert locker["reply"].endswith("Kept private — only you see this."), locker
    assert surprise["reply"].endswith("Sam sieht das nicht."), surprise
    rows = await routed.admin.fetch(
        """SELECT 'memory' AS kind, content AS what, author_id AS author, visibility, hidden_from FROM memories
            WHERE household_id = $1
           UNION ALL
           SELECT 'event', title, created_by, visibility, hidden_from FROM events WHERE household_id = $1
           ORDER BY what""",
        family.household_id,
    )
    alex, sam, mia = (family.user_ids[name] for name in ("Alex", "Sam", "Mia"))
    seen = {(r["kind"], r["author"], r["visibility"], r["hidden_from"]) for r in rows}
    assert ("memory", alex, "private", None) in seen and ("event", alex, "private", None) in seen
    assert ("memory", mia, "private", None) in seen
    assert ("event", alex, "household", sam) in seen
    assert all(r["visibility"] == "private" or r["hidden_from"] == sam for r in rows), rows


async def test_on_the_routed_engine_a_child_cannot_correct_an_adults_expense_and_reads_why(routed: System) -> None:  # noqa: F811
    """Mia's correction of Sam's expense is refused by the tools; the reply tells her in words meant for her, never
    with the hint the tool wrote for the model."""
    family = await make_family(routed.admin, "Routed child", {"Sam": "Europe/Berlin", "Mia": "Europe/Berlin"})
    await routed.admin.execute("UPDATE users SET role = 'child' WHERE id = $1", family.user_ids["Mia"])
    routed.llm.script(answers(expense={"kind": "expense", "category": "groceries", "merchant": "Rewe"}))
    await send(routed, family, "groceries 26.00 EUR at Rewe", member="Sam")

    refused = await send(routed, family, "the Rewe groceries were 26.50, not 26.00", member="Mia")

    amount = await routed.admin.fetchval("SELECT amount FROM memories WHERE household_id = $1", family.household_id)
    assert str(amount) == "26.00"
    assert "Please ask an adult." in refused["reply"], refused
    assert "memory" not in refused["reply"] and "tell the member" not in refused["reply"], refused


async def test_a_correction_keeps_who_sees_the_row_whatever_the_model_set(system: System) -> None:
    """Alex corrects her private locker code: a model that also makes the row the household's (in its plan, or with
    a native call while replying) changes the code, and the row stays hers alone — her words did not ask."""
    family = await make_family(system.admin, "KeepAudience", {"Alex": "Europe/Berlin", "Sam": "Europe/Berlin"})
    system.llm.script(careless("store", {"content": "My locker code is 4312", "kind": "fact"}))
    await system.client.post(
        "/v1/messages", json={"text": "My locker code is 4312, keep it private"}, headers=family.auth("Alex")
    )
    memory_id = await system.admin.fetchval("SELECT id FROM memories WHERE household_id = $1", family.household_id)
    for native, code in ((False, "4313"), (True, "4314")):
        update = {"memory_id": memory_id, "content": f"My locker code is {code}", "hidden_from": None}
        system.llm.script(careless("update_memory_fields", update, native=native))
        await system.client.post(
            "/v1/messages", json={"text": f"actually my locker code is {code}"}, headers=family.auth("Alex")
        )
        row = await system.admin.fetchrow("SELECT content, visibility FROM memories WHERE id = $1", memory_id)
        assert tuple(row) == (f"My locker code is {code}", "private"), native
