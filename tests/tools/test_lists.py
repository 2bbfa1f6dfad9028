"""The shared-list tools through the registry: lists by their common names, items with quantity and assignee,
ticking by words, clearing, clear messages for what cannot be done, and concurrent edits that lose nothing."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from tools.errors import ToolRetry
from tools.lists import canonical_name, kinds_named
from tools.storage.database import Database

from . import REGISTRY, call, make_family, tool_context


@pytest.mark.parametrize(
    ("said", "name", "kind"),
    [
        ("shopping list", "shopping", "shopping"),
        ("Einkaufsliste", "shopping", "shopping"),
        ("购物清单", "shopping", "shopping"),
        ("to-do list", "todo", "todo"),
        ("Packliste", "packing", "packing"),
        ("packing for the trip", "packing for the trip", "packing"),
        ("Christmas presents", "Christmas presents", "other"),
        ("wishlist", "wishlist", "other"),
        ("Wishlist list", "Wishlist", "other"),
        ("shoppinglist", "shopping", "shopping"),
    ],
)
def test_common_list_names_reach_one_list(said: str, name: str, kind: str) -> None:
    assert canonical_name(said) == (name, kind)


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("kannst du noch klopapier und spüli auf die liste packen", set()),  # "packen" puts them on a list
        ("sonnencreme auf die packliste", {"packing"}),
        ("add sunscreen to the packing list", {"packing"}),
        ("milch auf die einkaufsliste", {"shopping"}),
    ],
)
def test_a_message_names_a_list_by_its_words_not_by_a_verb_of_putting(text: str, kinds: set[str]) -> None:
    assert kinds_named(text) == kinds


async def test_add_show_tick_assign_and_clear(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna", "Tom")
    added = await call(
        db,
        family,
        "Anna",
        "add_list_items",
        {"list_name": "Einkaufsliste", "items": [{"text": "milk"}, {"text": "flour", "quantity": "2 kg"}]},
    )
    assert added["list_name"] == "shopping" and added["created"] is True
    assert [(i["text"], i.get("quantity")) for i in added["items"]] == [("milk", None), ("flour", "2 kg")]
    await call(db, family, "Tom", "add_list_items", {"items": [{"text": "take out the bins"}], "list_name": "todo"})

    ticked = await call(db, family, "Tom", "update_list_item", {"item": "Milk", "done": True})
    assert ticked["done"] is True and ticked["list_name"] == "shopping" and ticked["previous"]["done_at"] is None
    assigned = await call(db, family, "Anna", "update_list_item", {"item": "bins", "assignee": "tom"})
    assert assigned["assignee"] == "Tom"

    shown = await call(db, family, "Anna", "show_list", {})
    assert {v["list_name"]: [i["text"] for i in v["items"]] for v in shown["lists"]} == {
        "shopping": ["flour"],
        "todo": ["take out the bins"],
    }
    with_done = await call(db, family, "Anna", "show_list", {"list_name": "shopping list", "include_done": True})
    assert [(i["text"], i["done"]) for i in with_done["lists"][0]["items"]] == [("flour", False), ("milk", True)]

    cleared = await call(db, family, "Anna", "clear_done_items", {"list_name": "shopping"})
    assert cleared["cleared"] == [ticked["item_id"]]
    again = await call(db, family, "Anna", "show_list", {"list_name": "shopping", "include_done": True})
    assert [i["text"] for i in again["lists"][0]["items"]] == ["flour"]


async def test_an_item_not_needed_after_all_is_taken_off_without_a_tick(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    family = await make_family(admin_conn, "Anna", "Tom")
    await call(db, family, "Anna", "add_list_items", {"items": [{"text": "milk"}, {"text": "crisps"}]})
    removed = await call(db, family, "Tom", "remove_list_item", {"item": "Crisps"})
    assert (removed["list_name"], removed["text"]) == ("shopping", "crisps") and len(removed["cleared"]) == 1
    shown = await call(db, family, "Anna", "show_list", {"include_done": True})
    assert [(i["text"], i["done"]) for i in shown["lists"][0]["items"]] == [("milk", False)]
    with pytest.raises(ToolRetry, match="no item matches 'crisps'"):
        await call(db, family, "Tom", "remove_list_item", {"item": "crisps"})  # gone, not ticked
    with pytest.raises(ToolRetry, match="invalid arguments"):
        REGISTRY.validate("remove_list_item", {"item": "milk", "item_id": 1})


async def test_several_lists_and_a_new_one(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna")
    made = await call(db, family, "Anna", "add_list_items", {"list_name": "packing for the trip", "items": []})
    same = await call(db, family, "Anna", "add_list_items", {"list_name": "Packing for the trip", "items": []})
    assert made["created"] is True and same["created"] is False and made["list_id"] == same["list_id"]
    assert made["kind"] == "packing" and made["items"] == []
    await call(db, family, "Anna", "add_list_items", {"list_name": "packing for the trip", "items": [{"text": "tent"}]})
    shown = await call(db, family, "Anna", "show_list", {"list_name": "packing for the trip"})
    assert [i["text"] for i in shown["lists"][0]["items"]] == ["tent"]


async def test_what_cannot_be_done_is_said_to_the_model(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna", "Tom")
    await call(db, family, "Anna", "add_list_items", {"items": [{"text": "oat milk"}, {"text": "soy milk"}]})
    cases = [
        ("update_list_item", {"item": "milk", "done": True}, "matches several items"),
        ("update_list_item", {"item": "bread", "done": True}, "no item matches"),
        ("update_list_item", {"item": "oat milk", "assignee": "Grandma"}, "not a member"),
        ("update_list_item", {"item_id": 2**62, "done": True}, "no item"),
        ("show_list", {"list_name": "camping"}, "there is no list 'camping'; the lists are: shopping"),
        ("clear_done_items", {"list_name": "camping"}, "there is no list"),
    ]
    for name, args, message in cases:
        with pytest.raises(ToolRetry, match=message):
            await call(db, family, "Anna", name, args)
    bad = [
        ("update_list_item", {"item": "milk"}),
        ("update_list_item", {"item": "milk", "item_id": 1, "done": True}),
        ("add_list_items", {"list_name": "shopping"}),
        ("add_list_items", {"items": [{"text": "x" * 201}]}),
        ("add_list_items", {"list_name": "", "items": []}),
    ]
    for name, args in bad:
        with pytest.raises(ToolRetry, match="invalid arguments"):
            REGISTRY.validate(name, args)


async def test_concurrent_adds_and_a_tick_lose_nothing(db: Database, admin_conn: asyncpg.Connection) -> None:
    """Two members add at once while a third ticks an item, each in a transaction that stays open until all three
    have written: every item and the tick survive."""
    family = await make_family(admin_conn, "Anna", "Tom", "Mia")
    first = await call(db, family, "Anna", "add_list_items", {"items": [{"text": "bread"}]})
    written = asyncio.Barrier(3)

    async def edit(member: str, name: str, args: dict[str, object]) -> None:
        async with tool_context(db, family, member) as ctx:
            await REGISTRY.run(ctx, name, REGISTRY.validate(name, args))
            await written.wait()  # all three transactions are open and have written before any commits

    await asyncio.gather(
        edit("Anna", "add_list_items", {"items": [{"text": "milk"}, {"text": "eggs"}]}),
        edit("Tom", "add_list_items", {"list_name": "Einkaufsliste", "items": [{"text": "apples"}]}),
        edit("Mia", "update_list_item", {"item_id": first["items"][0]["item_id"], "done": True}),
    )
    shown = await call(db, family, "Anna", "show_list", {"list_name": "shopping", "include_done": True})
    items = {i["text"]: i["done"] for i in shown["lists"][0]["items"]}
    assert items == {"milk": False, "eggs": False, "apples": False, "bread": True}


async def test_two_members_creating_the_same_list_at_once_get_one(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna", "Tom")
    await asyncio.gather(
        call(db, family, "Anna", "add_list_items", {"list_name": "todo", "items": [{"text": "bins"}]}),
        call(db, family, "Tom", "add_list_items", {"list_name": "To-do list", "items": [{"text": "lawn"}]}),
    )
    shown = await call(db, family, "Anna", "show_list", {})
    assert [(v["list_name"], sorted(i["text"] for i in v["items"])) for v in shown["lists"]] == [
        ("todo", ["bins", "lawn"])
    ]
