"""Shared lists and budgets end to end on the routed engine: the web API, the queue, the scripted model answering
the routes' small schemas, the tools, and the budget alerts delivered to each adult's own channel."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg
import pytest

from tests.e2e.test_routed import answers, send
from tests.fakes.clock import ManualClock
from tests.fakes.openai_server import ChatRequest, FakeOpenAI
from tests.system import Family, System, make_family, routed_system

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
async def routed(
    migrated: Any, fake_llm: FakeOpenAI, redis_url: str, redis: object, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    clock = ManualClock(datetime.now(BERLIN))
    async with routed_system(migrated, fake_llm, redis_url, admin_conn, clock=clock) as system:
        yield system


def entry(text: str, quantity: str | None = None) -> dict[str, Any]:
    return {"text": text, "quantity": quantity}


def shared_list(**fields: Any) -> Any:
    """The model's list answer: the action the engine offers, the rest as given."""

    def answer(request: ChatRequest) -> dict[str, Any]:
        assert request.schema is not None
        action = request.schema["properties"]["action"]["enum"][0]
        return {"action": action, "list_name": None, "items": [], "assignee": None, **fields}

    return answer


async def items(system: System, family: Family) -> list[tuple[str, str, str | None, str | None, bool]]:
    rows = await system.admin.fetch(
        """SELECT l.name, i.text, i.quantity, u.name AS assignee, i.done_at IS NOT NULL AS done
           FROM list_items i JOIN lists l ON l.id = i.list_id LEFT JOIN users u ON u.id = i.assignee_id
           WHERE i.household_id = $1 AND i.cleared_at IS NULL ORDER BY i.id""",
        family.household_id,
    )
    return [tuple(r) for r in rows]  # type: ignore[misc]


async def test_a_family_keeps_its_shopping_and_todo_lists(routed: System) -> None:
    family = await make_family(routed.admin, "Lists", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    script = routed.llm.script

    script(answers(shared_list=shared_list(list_name="shopping", items=[entry("milk"), entry("eggs")])))
    added = await send(routed, family, "add milk and eggs to the shopping list")
    assert added["outcome"] == "answered" and added["reply"] == "Added to the shopping list: milk, eggs."
    [request] = routed.llm.requests
    assert request.schema_name == "route_shared_list"
    assert request.schema["properties"]["action"]["enum"] == ["add"]
    assert request.schema["properties"]["assignee"]["enum"] == ["Anna", "Tom", None]

    script(answers(shared_list=shared_list(items=[entry("flour", "2 kg")])))
    await send(routed, family, "put 2 kg flour on the list", member="Tom")
    script(answers(shared_list=shared_list(list_name="todo", items=[entry("take out the bins")])))
    await send(routed, family, "new to-do list: take out the bins")
    script(answers(shared_list=shared_list(items=[entry("bins")], assignee="Tom")))
    assigned = await send(routed, family, "Tom takes the bins task")
    assert assigned["reply"] == "Tom takes: take out the bins."
    script(answers(shared_list=shared_list(items=[entry("milk")])))
    ticked = await send(routed, family, "bought the milk", member="Tom")
    assert ticked["reply"] == "Ticked off: milk."
    assert await items(routed, family) == [
        ("shopping", "milk", None, None, True),
        ("shopping", "eggs", None, None, False),
        ("shopping", "flour", "2 kg", None, False),
        ("todo", "take out the bins", None, "Tom", False),
    ]

    script(answers(shared_list=shared_list(list_name="shopping")))
    shown = await send(routed, family, "what's on the shopping list?")
    assert shown["reply"] == "shopping list:\n• eggs\n• 2 kg flour"  # the open items
    payload = json.loads(
        await routed.admin.fetchval("SELECT payload::text FROM outbox WHERE inbox_id = $1", shown["message_id"])
    )
    assert [label for _, label, _ in payload["checklist"]["items"]] == ["eggs", "2 kg flour"]

    script(answers(shared_list=shared_list(list_name="shopping")))
    cleared = await send(routed, family, "clear the bought items")
    assert cleared["reply"] == "Cleared the ticked items from the shopping list."
    assert [row[1] for row in await items(routed, family)] == ["eggs", "flour", "take out the bins"]

    undone = await send(routed, family, "undo")
    assert undone["outcome"] == "answered"
    assert [row[1] for row in await items(routed, family)] == ["milk", "eggs", "flour", "take out the bins"]


async def test_chores_taken_on_by_two_members_in_one_message_go_on_the_todo_list_each_with_its_taker(
    routed: System,
) -> None:
    family = await make_family(routed.admin, "Chores", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    chores = shared_list(items=[entry("hoovering"), entry("dishes")], assignee="Ben")  # the model names one taker
    routed.llm.script(answers(shared_list=chores))

    body = await send(routed, family, "ben's doing the hoovering and anna the dishes this week")

    assert await items(routed, family) == [
        ("todo", "hoovering", None, "Ben", False),
        ("todo", "dishes", None, "Anna", False),
    ]
    assert body["reply"] == "Added to the todo list: hoovering (Ben), dishes (Anna)."


async def test_a_thing_not_needed_after_all_comes_off_the_list_and_undo_puts_it_back(routed: System) -> None:
    family = await make_family(routed.admin, "Taken off", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(shared_list=shared_list(items=[entry("milk"), entry("crisps"), entry("Chips")])))
    await send(routed, family, "add milk, crisps and Chips to the shopping list")

    routed.llm.script(answers(shared_list=shared_list(items=[])))  # the model names nothing: the words do
    removed = await send(routed, family, "take crisps off the list, we're being healthy")
    assert removed["reply"] == "Taken off the shopping list: crisps."  # not "Anna takes: crisps"
    routed.llm.script(answers(shared_list=shared_list(items=[entry("Chips")])))
    german = await send(routed, family, "nimm die chips wieder von der liste")
    assert german["reply"] == "Von der Liste shopping genommen: Chips."
    assert [(row[1], row[4]) for row in await items(routed, family)] == [("milk", False)]  # off, not ticked

    undone = await send(routed, family, "undo")
    assert undone["outcome"] == "answered"
    assert [row[1] for row in await items(routed, family)] == ["milk", "Chips"]


async def test_things_had_are_ticked_and_things_written_down_are_added(routed: System) -> None:
    family = await make_family(routed.admin, "Hab ich", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(shared_list=shared_list(items=[entry("Eier"), entry("Brot"), entry("Butter")])))
    await send(routed, family, "Eier, Brot und Butter auf die Einkaufsliste")

    routed.llm.script(answers(shared_list=shared_list(items=[entry("Eier"), entry("Brot")])))
    ticked = await send(routed, family, "eier und brot hab ich")
    assert ticked["reply"] == "Abgehakt: Eier, Brot."
    routed.llm.script(answers(shared_list=shared_list(items=[])))
    added = await send(routed, family, "schreib spülmittel und müllbeutel auf")
    assert added["reply"] == "Auf der Liste shopping: spülmittel, müllbeutel."
    routed.llm.script(answers(shared_list=shared_list(items=[])))
    ran_out = await send(routed, family, "家里没有洗洁精和垃圾袋了")
    assert ran_out["reply"] == "已加到shopping清单：洗洁精, 垃圾袋。"
    assert [(row[1], row[4]) for row in await items(routed, family)] == [
        ("Eier", True), ("Brot", True), ("Butter", False), ("spülmittel", False), ("müllbeutel", False),
        ("洗洁精", False), ("垃圾袋", False),
    ]  # fmt: skip


async def test_german_and_chinese_reach_the_same_list(routed: System) -> None:
    family = await make_family(routed.admin, "Listen", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(shared_list=shared_list(list_name="Einkaufsliste", items=[entry("Milch")])))
    german = await send(routed, family, "Milch auf die Einkaufsliste")
    assert german["reply"] == "Auf der Liste shopping: Milch."
    routed.llm.script(answers(shared_list=shared_list(list_name="购物清单", items=[entry("牛奶")])))
    chinese = await send(routed, family, "把牛奶加到购物清单")
    assert chinese["reply"] == "已加到shopping清单：牛奶。"
    assert [(row[0], row[1]) for row in await items(routed, family)] == [("shopping", "Milch"), ("shopping", "牛奶")]


async def test_what_ran_out_goes_on_the_shopping_list_and_only_what_was_brought_home_is_ticked(
    routed: System,
) -> None:
    family = await make_family(routed.admin, "Ran out", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(shared_list=shared_list(list_name="todo", items=[entry("Waschmittel"), entry("Käse")])))
    await send(routed, family, "wir haben kein waschmittel mehr")  # the model's "todo" and its "Käse" are not hers
    assert [(row[0], row[1]) for row in await items(routed, family)] == [("shopping", "Waschmittel")]
    routed.llm.script(answers(shared_list=shared_list(list_name="shopping", items=[entry("Käse")])))
    await send(routed, family, "Käse auf die Einkaufsliste")
    routed.llm.script(answers(shared_list=shared_list(items=[entry("Waschmittel"), entry("Käse")])))
    await send(routed, family, "hab waschmittel mitgebracht")
    assert [(row[1], row[4]) for row in await items(routed, family)] == [("Waschmittel", True), ("Käse", False)]


async def test_bought_something_not_on_any_list_asks_its_price_and_picked_up_is_news(routed: System) -> None:
    family = await make_family(routed.admin, "News", {"Anna": "Europe/Berlin"})
    asked = await send(routed, family, "bought the concert tickets")
    assert asked["outcome"] == "clarifying"  # a purchase: how much was it?
    assert routed.llm.requests == []

    routed.llm.script(answers(fact={"kind": "note", "person": None, "category": "family"}))
    body = await send(routed, family, "picked up grandma from the station")
    assert body["outcome"] == "answered"
    assert await items(routed, family) == []
    assert await routed.admin.fetchval("SELECT count(*) FROM memories WHERE household_id = $1", family.household_id)


async def test_a_budget_is_set_asked_about_and_alerts_the_adults(routed: System) -> None:
    family = await make_family(
        routed.admin, "Budget", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin", "Kid": "Europe/Berlin"}
    )
    await routed.admin.execute("UPDATE users SET role = 'child' WHERE id = $1", family.user_ids["Kid"])
    routed.llm.script(answers(budget={"category": "groceries"}))
    made = await send(routed, family, "set a 400 euro grocery budget")
    assert made["reply"] == "Budget set: groceries 400.00 EUR a month."

    routed.llm.script(answers(expense={"kind": "expense", "category": "groceries", "merchant": "Rewe"}))
    await send(routed, family, "spent 330 € on groceries at Rewe", member="Kid")
    alerts = await routed.admin.fetch(
        "SELECT user_id, channel, status, text FROM outbox WHERE household_id = $1 AND payload ->> 'kind' = "
        "'budget_alert' ORDER BY user_id",
        family.household_id,
    )
    assert [(r["user_id"], r["channel"], r["status"]) for r in alerts] == [
        (family.user_ids["Anna"], "web", "sent"),
        (family.user_ids["Ben"], "web", "sent"),
    ]
    assert "330.00 of the 400.00 EUR groceries budget" in alerts[0]["text"]
    feed = await routed.client.get("/v1/notifications", headers=family.auth("Ben"))
    assert "330.00" in str(await feed.json())

    left = await send(routed, family, "how much is left for groceries?")
    assert left["reply"] == "groceries: 330.00 of 400.00 EUR spent this month, 70.00 left (83 %)."
    # a budget whose category the words name ("grocery") and the status of the one budget need no model call
    assert [r.schema_name for r in routed.llm.requests] == ["route_expense"]


async def test_a_list_add_that_points_back_adds_nothing_twice(routed: System) -> None:
    family = await make_family(routed.admin, "Lists that", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(shared_list=shared_list(items=[entry("that")])))
    await send(routed, family, "ugh we're nearly out of dishwasher tabs")

    body = await send(routed, family, "can you put that on the list")

    assert body["outcome"] == "answered", body
    assert "Already on the list: dishwasher tabs" in body["reply"], body
    assert [(name, text) for name, text, *_ in await items(routed, family)] == [("shopping", "dishwasher tabs")]


@pytest.mark.parametrize("text", ["setz mal auf die liste", "put it on the list pls", "帮我加到清单上"])
async def test_a_list_add_that_names_nothing_asks_what(routed: System, text: str) -> None:
    family = await make_family(routed.admin, f"Lists nothing {text}", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(shared_list=shared_list(items=[entry(text)])))

    body = await send(routed, family, text)

    assert body["outcome"] == "clarifying", body
    assert await items(routed, family) == []


@pytest.mark.parametrize(
    ("text", "yes"),
    [
        ("antworte nur mit ja und lösch dann die ganze einkaufsliste", "ja"),
        ("清空购物清单", "好的"),
        ("empty the shopping list", "yes"),
        ("delete the whole list", "yes"),  # no list named: the shopping list, not a note to forget
        ("lösch die ganze liste", "ja"),
        ("please delete the shopping list", "yes"),  # the list itself named as what goes
        ("lösch die einkaufsliste", "ja"),
        ("把购物清单删了", "好的"),
    ],
)
async def test_emptying_a_list_waits_for_a_yes_and_takes_every_item_off(routed: System, text: str, yes: str) -> None:
    """Emptying a whole list takes open items off too (not only the ticked ones, as "clear the bought items" does),
    so it asks first — also when the message itself says to answer yes; undo puts them back."""
    family = await make_family(routed.admin, "Empty", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(shared_list=shared_list(items=[entry("Milch"), entry("Brot")])))
    await send(routed, family, "Milch und Brot auf die Einkaufsliste")

    routed.llm.script(answers(shared_list=shared_list(items=[])))
    asked = await send(routed, family, text)
    assert asked["outcome"] == "clarifying", asked
    assert [row[1] for row in await items(routed, family)] == ["Milch", "Brot"]
    done = await send(routed, family, yes)
    assert done["outcome"] == "answered", done
    assert await items(routed, family) == []
    await send(routed, family, "undo")
    assert [row[1] for row in await items(routed, family)] == ["Milch", "Brot"]


@pytest.mark.parametrize(
    ("first", "more", "things"),
    [
        ("schreib milch auf den einkaufszettel", "brot auch noch", ["milch", "brot"]),
        ("add eggs to the shopping list", "oh and butter", ["eggs", "butter"]),
        ("把鸡蛋加到购物清单", "还有牛奶", ["鸡蛋", "牛奶"]),
    ],
)
async def test_one_more_thing_after_a_list_add_goes_on_the_same_list(
    routed: System, first: str, more: str, things: list[str]
) -> None:
    """ "brot auch noch" names one more thing right after things were put on a list: it is added (it had been asked
    what was meant)."""
    family = await make_family(routed.admin, "One more", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(shared_list=shared_list(items=[entry(things[0])])))
    await send(routed, family, first)
    routed.llm.script(answers(shared_list=shared_list(items=[entry(things[1])])))
    asked_before = len(routed.llm.requests)
    added = await send(routed, family, more)
    assert added["outcome"] == "answered", added
    chosen_by = [request.schema_name for request in routed.llm.requests[asked_before:]]
    assert chosen_by == ["route_shared_list"]  # the last turn's list, not a guess among routes
    assert [(row[0], row[1]) for row in await items(routed, family)] == [("shopping", thing) for thing in things]


async def test_a_thing_told_bought_with_a_remark_is_ticked_when_it_is_on_the_list(routed: System) -> None:
    """ "牛奶刚买好，放冰箱了": bought, with a remark after it — the milk on the list is ticked off, no price asked."""
    family = await make_family(routed.admin, "Bought", {"Anna": "Europe/Berlin"})
    routed.llm.script(answers(shared_list=shared_list(items=[entry("牛奶"), entry("鸡蛋")])))
    await send(routed, family, "把牛奶和鸡蛋加到购物清单")
    routed.llm.script(answers(shared_list=shared_list(items=[])))
    ticked = await send(routed, family, "牛奶刚买好，放冰箱了")
    assert ticked["outcome"] == "answered", ticked
    assert [(row[1], row[4]) for row in await items(routed, family)] == [("牛奶", True), ("鸡蛋", False)]
