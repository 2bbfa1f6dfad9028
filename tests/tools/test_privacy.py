"""Private means private, through the tools: who sees what a member writes (`visibility`, `hidden_from`), who may
change what (`tools.permissions`, the same for every path), undo that never takes back another member's work,
budget alerts each adult may read, and forget-me that removes the member's private rows and nothing of anyone
else's. Sam owns the household, Alex is an adult, Mia a child."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from engine.digests import gather_facts
from tools.audience import SetVisibilityArgs, set_visibility
from tools.errors import NotPermitted, RowNotFound, ToolRetry
from tools.events import import_events
from tools.infra.ics import IcsEvent
from tools.storage import firings
from tools.storage.database import Database
from tools.storage.digests import Occurrence

from . import REGISTRY, Family, make_family, tool_context

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
ROLES = {"Sam": "owner", "Alex": "adult", "Mia": "child"}


@pytest.fixture
async def family(admin_conn: asyncpg.Connection) -> Family:
    made = await make_family(admin_conn, "Sam", "Alex", "Mia")
    for name, role in ROLES.items():
        await admin_conn.execute("UPDATE users SET role = $2 WHERE id = $1", made.id(name), role)
    return made


async def run(db: Database, family: Family, member: str, tool: str, args: dict[str, Any], **context: Any) -> Any:
    """One tool call through the registry, as the member, with the household's roles."""
    async with tool_context(db, family, member, roles=ROLES, now=context.pop("now", NOW), **context) as ctx:
        return await REGISTRY.run(ctx, tool, REGISTRY.validate(tool, args))


async def search(db: Database, family: Family, member: str, **context: Any) -> list[str]:
    found = await run(db, family, member, "search", {"limit": 50}, **context)
    return sorted(m["content"] for m in found["memories"])


# Who sees it -----------------------------------------------------------------------------------------------------


async def test_private_and_surprise_rows_are_seen_by_whom_they_should(db: Database, family: Family) -> None:
    await run(
        db,
        family,
        "Alex",
        "store",
        {"content": "Surprise party for Sam on Dec 12", "kind": "plan", "hidden_from": "Sam"},
    )
    await run(db, family, "Mia", "store", {"content": "Locker code 4312", "kind": "fact", "visibility": "private"})
    await run(db, family, "Alex", "store", {"content": "Milk is out", "kind": "note"})
    assert await search(db, family, "Sam") == ["Milk is out"]
    assert await search(db, family, "Alex") == ["Milk is out", "Surprise party for Sam on Dec 12"]
    assert await search(db, family, "Mia") == ["Locker code 4312", "Milk is out", "Surprise party for Sam on Dec 12"]
    assert await search(db, family, "Mia", shared=True) == ["Milk is out"]  # a group chat: nobody's private rows

    surprise = await run(
        db,
        family,
        "Alex",
        "add_event",
        {"title": "Party", "start": "2026-12-12T18:00", "whose": "household", "hidden_from": "Sam"},
    )
    assert (surprise["visibility"], surprise["hidden_from"], surprise["author"]) == ("household", "Sam", "Alex")
    listed = await run(db, family, "Sam", "list_events", {"start": "2026-12-01", "days": 31})
    assert listed["events"] == []


@pytest.mark.parametrize(
    ("args", "refusal"),
    [
        ({"visibility": "private", "hidden_from": "Sam"}, "not both"),
        ({"hidden_from": "Alex"}, "cannot be kept from its author"),
        ({"hidden_from": "Nobody"}, "no member named 'Nobody'"),
    ],
)
async def test_contradicting_audiences_go_back_to_the_model(
    db: Database, family: Family, args: dict[str, Any], refusal: str
) -> None:
    with pytest.raises(ToolRetry, match=refusal):
        await run(db, family, "Alex", "store", {"content": "x", "kind": "note", **args})


async def test_nothing_is_kept_private_in_a_group_chat(db: Database, family: Family) -> None:
    with pytest.raises(ToolRetry, match="group chat") as refused:
        await run(db, family, "Alex", "store", {"content": "x", "kind": "note", "visibility": "private"}, shared=True)
    assert refused.value.for_member is not None and "private chat" in refused.value.for_member


async def visibility(db: Database, family: Family, member: str, **args: Any) -> dict[str, Any]:
    async with tool_context(db, family, member, roles=ROLES, now=NOW) as ctx:
        changed = await set_visibility(ctx, SetVisibilityArgs.model_validate(args))
    return changed.model_dump()


async def test_only_the_author_decides_who_sees_a_row(db: Database, family: Family) -> None:
    note = await run(db, family, "Alex", "store", {"content": "Gift ideas", "kind": "note"})
    with pytest.raises(NotPermitted, match="decides who sees it"):
        await visibility(db, family, "Sam", kind="memory", id=note["memory_id"], visibility="private")
    changed = await visibility(db, family, "Alex", kind="memory", id=note["memory_id"], hidden_from="Sam")
    assert (changed["hidden_from"], changed["previous"]["hidden_from"]) == ("Sam", None)
    assert await search(db, family, "Sam") == []
    await visibility(db, family, "Alex", kind="memory", id=note["memory_id"], visibility="household")
    assert await search(db, family, "Sam") == ["Gift ideas"]
    with pytest.raises(RowNotFound):  # Sam cannot even find Alex's private rows
        private = await run(db, family, "Alex", "store", {"content": "x", "kind": "note", "visibility": "private"})
        await visibility(db, family, "Sam", kind="memory", id=private["memory_id"], visibility="household")

    when = (NOW + timedelta(hours=1)).isoformat()
    for_sam = await run(db, family, "Alex", "schedule_reminder", {"text": "x", "when": when, "recipient": "Sam"})
    with pytest.raises(ToolRetry, match="private reminder is for its author alone"):
        await visibility(db, family, "Alex", kind="reminder", id=for_sam["reminder_id"], visibility="private")


async def test_a_private_reminder_is_the_authors_alone_and_still_fires(
    db: Database, family: Family, admin_conn: asyncpg.Connection
) -> None:
    when = (NOW + timedelta(hours=1)).isoformat()
    with pytest.raises(ToolRetry, match="private reminder is for the member alone"):
        await run(
            db,
            family,
            "Alex",
            "schedule_reminder",
            {"text": "x", "when": when, "recipient": "Sam", "visibility": "private"},
        )
    inbox = await _inbox(admin_conn, family, "Alex")
    mine = await run(
        db,
        family,
        "Alex",
        "schedule_reminder",
        {"text": "Pick up the ring", "when": when, "visibility": "private"},
        inbox_id=inbox,
    )
    async with db.household(family.household_id) as conn:  # the worker, once the message committed
        assert [due.reminder_id for due in await firings.changed_by_message(conn, inbox)] == [mine["reminder_id"]]
    surprise = await run(
        db,
        family,
        "Alex",
        "schedule_reminder",
        {"text": "Decorate", "when": when, "recipient": "household", "hidden_from": "Sam"},
    )
    listed = await run(db, family, "Sam", "list_reminders", {})
    assert listed["reminders"] == []
    # The firing job knows only the reminder and its household; it acts for the author, and keeps the surprise
    # from Sam.
    due = NOW + timedelta(hours=2)
    for reminder, recipients in ((mine, ["Alex"]), (surprise, ["Alex", "Mia"])):
        async with db.household(family.household_id) as conn:
            fired = await firings.fire(conn, reminder["reminder_id"], now=due)
        assert fired is not None
        rows = await admin_conn.fetch(
            "SELECT user_id FROM outbox WHERE id = ANY($1::bigint[]) ORDER BY user_id",
            [d.outbox_id for d in fired.deliveries],
        )
        assert [r["user_id"] for r in rows] == sorted(family.id(name) for name in recipients)


async def test_a_reminder_before_a_private_or_surprise_event_is_kept_as_the_event_is(
    db: Database, family: Family, admin_conn: asyncpg.Connection
) -> None:
    """ "Remind me an hour before" Alex's private therapy or the party kept from Sam: the reminder carries the event's
    title, so it is seen by whom the event is — not by the household, nor by Sam in the morning's agenda."""
    tomorrow = (NOW + timedelta(days=1)).replace(hour=15)
    therapy = await run(db, family, "Alex", "add_event", {"title": "Therapy", "start": tomorrow.isoformat(),
                                                         "visibility": "private"})  # fmt: skip
    party = await run(db, family, "Alex", "add_event", {"title": "Sam's party", "start": tomorrow.isoformat(),
                                                       "whose": "household", "hidden_from": "Sam"})  # fmt: skip
    before = [
        await run(db, family, "Alex", "remind_before_event", {"event_id": event["event_id"], "minutes_before": 60})
        for event in (therapy, party)
    ]
    rows = await admin_conn.fetch(
        "SELECT text, visibility, hidden_from FROM reminders WHERE id = ANY($1::bigint[]) ORDER BY text",
        [r["reminder_id"] for r in before],
    )
    assert [tuple(r) for r in rows] == [("Sam's party", "household", family.id("Sam")), ("Therapy", "private", None)]
    morning = Occurrence("morning", tomorrow.date(), tomorrow.date() + timedelta(days=1), NOW)
    async with tool_context(db, family, "Sam", roles=ROLES, now=NOW, shared=True) as ctx:
        agenda = await gather_facts(ctx, morning)
    assert agenda["reminders"] == [] and agenda["events"] == []


# Who may change it -----------------------------------------------------------------------------------------------


async def test_a_child_changes_only_what_they_made(
    db: Database, family: Family, admin_conn: asyncpg.Connection
) -> None:
    expense = await run(
        db,
        family,
        "Sam",
        "store",
        {"content": "Groceries", "kind": "expense", "amount": "26.00", "currency": "EUR", "category": "groceries"},
    )
    own = await run(
        db, family, "Mia", "store", {"content": "Comic", "kind": "expense", "amount": "4", "currency": "EUR"}
    )
    with pytest.raises(NotPermitted, match="child's account") as refused:
        await run(db, family, "Mia", "update_memory_fields", {"memory_id": expense["memory_id"], "amount": "26.50"})
    assert refused.value.rule == "child" and refused.value.problem == "not_allowed"
    forgot = await run(db, family, "Mia", "forget", {"memory_ids": [expense["memory_id"], own["memory_id"]]})
    assert (forgot["forgotten"], forgot["not_allowed"]) == ([own["memory_id"]], [expense["memory_id"]])
    changed = await run(
        db, family, "Alex", "update_memory_fields", {"memory_id": expense["memory_id"], "amount": "26.50"}
    )
    assert (changed["author"], changed["edited_by"]) == ("Sam", "Alex")
    row = await admin_conn.fetchrow("SELECT amount, updated_by FROM memories WHERE id = $1", expense["memory_id"])
    assert (str(row["amount"]), row["updated_by"]) == ("26.50", family.id("Alex"))

    with pytest.raises(NotPermitted, match="budgets are for the household's adults"):
        await run(db, family, "Mia", "set_budget", {"category": "groceries", "amount": "1", "currency": "EUR"})


async def test_a_child_cannot_move_or_cancel_an_adults_or_the_households_event(db: Database, family: Family) -> None:
    own = await run(db, family, "Mia", "add_event", {"title": "Football", "start": "2026-12-02T17:00"})
    theirs = await run(db, family, "Sam", "add_event", {"title": "Dentist", "start": "2026-12-03T09:00"})
    everyone = await run(db, family, "Sam", "add_event", {"title": "Trip", "start": "2026-12-20", "whose": "household"})
    for event in (theirs, everyone):
        with pytest.raises(NotPermitted):
            await run(db, family, "Mia", "move_event", {"event_id": event["event_id"], "start": "2026-12-04T09:00"})
        with pytest.raises(NotPermitted):
            await run(db, family, "Mia", "cancel_event", {"event_id": event["event_id"]})
    moved = await run(db, family, "Mia", "move_event", {"event_id": own["event_id"], "start": "2026-12-02T18:00"})
    assert moved["start"].startswith("2026-12-02T18:00")
    cancelled = await run(db, family, "Alex", "cancel_event", {"event_id": theirs["event_id"]})
    assert (cancelled["status"], cancelled["edited_by"]) == ("cancelled", "Alex")


async def test_an_import_never_rewrites_another_members_event(
    db: Database, family: Family, admin_conn: asyncpg.Connection
) -> None:
    async with tool_context(db, family, "Sam", roles=ROLES, now=NOW) as ctx:
        first = await import_events(ctx, [_ics("school-1", "Parents' evening")], "household")
    assert first.created == 1
    async with tool_context(db, family, "Mia", roles=ROLES, now=NOW) as ctx:
        again = await import_events(ctx, [_ics("school-1", "Nothing happens")], "self")
    assert (again.kept, again.updated, again.created) == (1, 0, 0)
    assert (
        await admin_conn.fetchval(
            "SELECT title FROM events WHERE household_id = $1 AND uid = 'school-1'", family.household_id
        )
        == "Parents' evening"
    )


async def test_a_child_answers_reminders_addressed_to_them_and_nothing_else(db: Database, family: Family) -> None:
    when = (NOW + timedelta(hours=1)).isoformat()
    for_mia = await run(db, family, "Sam", "schedule_reminder", {"text": "Pills", "when": when, "recipient": "Mia"})
    sams = await run(db, family, "Sam", "schedule_reminder", {"text": "Call the bank", "when": when})
    await run(db, family, "Mia", "snooze_reminder", {"reminder_id": for_mia["reminder_id"], "minutes": 15})
    await run(db, family, "Mia", "complete_reminder", {"reminder_id": for_mia["reminder_id"]})
    with pytest.raises(NotPermitted):
        await run(db, family, "Mia", "cancel_reminder", {"reminder_id": for_mia["reminder_id"]})
    for tool, extra in (("cancel_reminder", {}), ("snooze_reminder", {"minutes": 15}), ("complete_reminder", {})):
        with pytest.raises(NotPermitted):
            await run(db, family, "Mia", tool, {"reminder_id": sams["reminder_id"], **extra})
    with pytest.raises(RowNotFound, match="list_reminders shows the reminder_ids") as missing:
        await run(db, family, "Mia", "cancel_reminder", {"reminder_id": 2**62})
    assert missing.value.problem == "not_found"


async def test_a_child_ticks_any_item_but_changes_only_their_own(db: Database, family: Family) -> None:
    added = await run(db, family, "Sam", "add_list_items", {"items": [{"text": "milk"}]})
    milk = added["items"][0]["item_id"]
    ticked = await run(db, family, "Mia", "update_list_item", {"item_id": milk, "done": True})
    assert (ticked["done"], ticked["edited_by"]) == (True, "Mia")
    with pytest.raises(NotPermitted):
        await run(db, family, "Mia", "update_list_item", {"item_id": milk, "quantity": "2"})
    with pytest.raises(NotPermitted):
        await run(db, family, "Mia", "clear_done_items", {"list_name": "shopping"})
    await run(db, family, "Alex", "clear_done_items", {"list_name": "shopping"})
    bread = (await run(db, family, "Sam", "add_list_items", {"items": [{"text": "bread"}]}))["items"][0]["item_id"]
    with pytest.raises(NotPermitted):
        await run(db, family, "Mia", "remove_list_item", {"item_id": bread})  # a parent's item stays on the list
    sweets = (await run(db, family, "Mia", "add_list_items", {"items": [{"text": "sweets"}]}))["items"][0]["item_id"]
    assert (await run(db, family, "Mia", "remove_list_item", {"item_id": sweets}))["cleared"] == [sweets]


async def test_private_list_items_stay_with_their_author(db: Database, family: Family) -> None:
    await run(db, family, "Sam", "add_list_items", {"items": [{"text": "milk"}]})
    await run(db, family, "Alex", "add_list_items", {"items": [{"text": "ring"}], "visibility": "private"})
    gifts = await run(
        db,
        family,
        "Alex",
        "add_list_items",
        {"list_name": "gifts for Sam", "hidden_from": "Sam", "items": [{"text": "watch"}]},
    )
    assert gifts["created"] and gifts["hidden_from"] == "Sam"

    def texts(shown: dict[str, Any]) -> dict[str, list[str]]:
        return {view["list_name"]: [item["text"] for item in view["items"]] for view in shown["lists"]}

    assert texts(await run(db, family, "Alex", "show_list", {})) == {
        "shopping": ["milk", "ring"],
        "gifts for Sam": ["watch"],
    }
    assert texts(await run(db, family, "Sam", "show_list", {})) == {"shopping": ["milk"]}
    assert texts(await run(db, family, "Mia", "show_list", {})) == {"shopping": ["milk"], "gifts for Sam": ["watch"]}
    with pytest.raises(ToolRetry, match="hidden from"):
        await run(
            db,
            family,
            "Alex",
            "add_list_items",
            {"list_name": "gifts for Sam", "hidden_from": "Sam", "items": [{"text": "x", "assignee": "Sam"}]},
        )


async def test_a_private_first_item_starts_the_households_shopping_list_not_a_private_one(
    db: Database, family: Family
) -> None:
    ring = await run(db, family, "Alex", "add_list_items", {"items": [{"text": "ring"}], "visibility": "private"})
    milk = await run(db, family, "Sam", "add_list_items", {"items": [{"text": "milk"}]})
    wishes = await run(
        db,
        family,
        "Mia",
        "add_list_items",
        {"list_name": "wishes", "items": [{"text": "pony"}], "visibility": "private"},
    )

    assert ring["created"] and ring["visibility"] == "household" and ring["items"][0]["visibility"] == "private"
    assert milk["list_id"] == ring["list_id"] and not milk["created"]
    assert wishes["visibility"] == "private"  # a list of its own name is kept as its first item is
    alex = await run(db, family, "Alex", "show_list", {"list_name": "shopping"})
    sam = await run(db, family, "Sam", "show_list", {"list_name": "shopping"})
    assert [i["text"] for v in alex["lists"] for i in v["items"]] == ["ring", "milk"]
    assert [i["text"] for v in sam["lists"] for i in v["items"]] == ["milk"]


# Undo --------------------------------------------------------------------------------------------------------------


async def test_undo_keeps_a_budget_another_member_changed_since(
    db: Database, family: Family, admin_conn: asyncpg.Connection
) -> None:
    inbox = await _inbox(admin_conn, family, "Alex")
    created = await run(
        db, family, "Alex", "set_budget", {"category": "groceries", "amount": "300", "currency": "EUR"}, inbox_id=inbox
    )
    await _journal(admin_conn, family, inbox, "set_budget", created)
    await run(db, family, "Sam", "set_budget", {"category": "groceries", "amount": "900", "currency": "EUR"})
    undone = await run(db, family, "Alex", "undo", {}, inbox_id=inbox + 1_000_000)
    assert undone["undone"] == [] and undone["kept"] == ["kept the groceries budget: Sam changed it since"]
    assert (
        str(await admin_conn.fetchval("SELECT amount FROM budgets WHERE household_id = $1", family.household_id))
        == "900.00"
    )


async def test_undo_of_a_removed_budget_puts_it_back_unless_another_member_set_one_since(
    db: Database, family: Family, admin_conn: asyncpg.Connection
) -> None:
    amounts = "SELECT category || ' ' || amount::text FROM budgets WHERE household_id = $1 ORDER BY category"
    for category in ("fuel", "groceries"):
        await run(db, family, "Sam", "set_budget", {"category": category, "amount": "300", "currency": "EUR"})
    made = {
        r["category"]: r["id"]
        for r in await admin_conn.fetch("SELECT id, category FROM budgets WHERE household_id = $1", family.household_id)
    }
    for category in ("fuel", "groceries"):
        inbox = await _inbox(admin_conn, family, "Alex")
        removed = await run(db, family, "Alex", "remove_budget", {"budget_id": made[category]}, inbox_id=inbox)
        assert removed["previous_updated_by"] == family.id("Sam")
        await _journal(admin_conn, family, inbox, "remove_budget", removed)
    await run(db, family, "Sam", "set_budget", {"category": "groceries", "amount": "900", "currency": "EUR"})

    asked = await _inbox(admin_conn, family, "Alex")
    kept = await run(db, family, "Alex", "undo", {}, inbox_id=asked)
    assert kept["undone"] == [] and kept["kept"] == ["kept the new groceries budget: Sam changed it since"]
    await _journal(admin_conn, family, asked, "undo", kept)  # the next undo goes one further back
    undone = await run(db, family, "Alex", "undo", {}, inbox_id=asked + 1_000_000)
    assert undone["undone"] == ["put back the fuel budget of 300.00 EUR"]
    assert [r[0] for r in await admin_conn.fetch(amounts, family.household_id)] == ["fuel 300.00", "groceries 900.00"]
    restored_by = "SELECT updated_by FROM budgets WHERE household_id = $1 AND category = 'fuel'"
    assert await admin_conn.fetchval(restored_by, family.household_id) == family.id("Sam")  # who set it, as before


async def test_undo_of_a_change_puts_back_who_changed_it_before(
    db: Database, family: Family, admin_conn: asyncpg.Connection
) -> None:
    note = await run(db, family, "Sam", "store", {"content": "Bins on Tuesday", "kind": "note"})
    await run(db, family, "Alex", "update_memory_fields", {"memory_id": note["memory_id"], "content": "Bins on Wed"})
    inbox = await _inbox(admin_conn, family, "Sam")
    changed = await run(
        db,
        family,
        "Sam",
        "update_memory_fields",
        {"memory_id": note["memory_id"], "content": "Bins on Thursday"},
        inbox_id=inbox,
    )
    await _journal(admin_conn, family, inbox, "update_memory_fields", changed)
    await run(db, family, "Sam", "undo", {}, inbox_id=inbox + 1_000_000)
    row = await admin_conn.fetchrow("SELECT content, updated_by FROM memories WHERE id = $1", note["memory_id"])
    assert (row["content"], row["updated_by"]) == ("Bins on Wed", family.id("Alex"))


_WHEN = (NOW + timedelta(days=2)).isoformat()
# Alex's write, Sam's change to the row it made, and what of the row shows Sam's change still stands.
_ALEX_THEN_SAM = {
    "memory": (
        ("store", {"content": "Bins on Tuesday", "kind": "note"}, "memory_id"),
        ("update_memory_fields", {"content": "Bins on Wednesday"}),
        "SELECT content = 'Bins on Wednesday' AND deleted_at IS NULL FROM memories WHERE id = $1",
    ),
    "event": (
        ("add_event", {"title": "Dinner", "start": "2026-12-04T19:00", "whose": "household"}, "event_id"),
        ("move_event", {"start": "2026-12-05T19:00"}),
        "SELECT status = 'confirmed' AND starts_at = '2026-12-05T18:00Z' FROM events WHERE id = $1",
    ),
    "reminder": (
        ("schedule_reminder", {"text": "Bins", "when": _WHEN, "recipient": "household"}, "reminder_id"),
        ("snooze_reminder", {"minutes": 30}),
        "SELECT status = 'active' AND updated_by IS NOT NULL FROM reminders WHERE id = $1",
    ),
    "list item": (
        ("add_list_items", {"items": [{"text": "milk"}]}, "items"),
        ("update_list_item", {"quantity": "2"}),
        "SELECT quantity = '2' AND cleared_at IS NULL FROM list_items WHERE id = $1",
    ),
}


@pytest.mark.parametrize("kind", list(_ALEX_THEN_SAM))
async def test_undo_keeps_a_row_another_member_changed_since(
    db: Database, family: Family, admin_conn: asyncpg.Connection, kind: str
) -> None:
    (tool, args, key), (change, change_args), still = _ALEX_THEN_SAM[kind]
    inbox = await _inbox(admin_conn, family, "Alex")
    made = await run(db, family, "Alex", tool, args, inbox_id=inbox)
    await _journal(admin_conn, family, inbox, tool, made)
    row_id = made[key][0]["item_id"] if key == "items" else made[key]
    id_field = "item_id" if key == "items" else key
    await run(db, family, "Sam", change, {id_field: row_id, **change_args})

    undone = await run(db, family, "Alex", "undo", {}, inbox_id=inbox + 1_000_000)

    assert undone["undone"] == [] and len(undone["kept"]) == 1 and "Sam changed it since" in undone["kept"][0]
    assert await admin_conn.fetchval(still, row_id), kind


# Sums that reach other members -----------------------------------------------------------------------------------


async def test_a_budget_alert_counts_what_its_reader_may_see(
    db: Database, family: Family, admin_conn: asyncpg.Connection
) -> None:
    await run(db, family, "Sam", "set_budget", {"category": "groceries", "amount": "100", "currency": "EUR"})
    await run(
        db,
        family,
        "Sam",
        "store",
        {"content": "Groceries", "kind": "expense", "amount": "20", "currency": "EUR", "category": "groceries"},
    )
    await run(
        db,
        family,
        "Alex",
        "store",
        {
            "content": "Secret groceries",
            "kind": "expense",
            "amount": "777.77",
            "currency": "EUR",
            "category": "groceries",
            "visibility": "private",
        },
    )
    rows = await admin_conn.fetch(
        "SELECT user_id, text FROM outbox WHERE household_id = $1 AND payload ->> 'kind' = 'budget_alert'",
        family.household_id,
    )
    assert [(r["user_id"], "797.77" in r["text"]) for r in rows] == [(family.id("Alex"), True)]
    assert not any("777" in r["text"] for r in rows if r["user_id"] == family.id("Sam"))


async def test_digests_and_agendas_count_only_what_every_member_may_see(db: Database, family: Family) -> None:
    """A digest goes to everyone: it is gathered acting for nobody, as the worker gathers it."""
    october = {"occurred_at": "2026-10-15", "kind": "expense", "currency": "EUR", "category": "groceries"}
    await run(db, family, "Sam", "store", {"content": "Groceries", "amount": "20", **october})
    await run(db, family, "Alex", "store", {"content": "Secret", "amount": "500", "visibility": "private", **october})
    await run(db, family, "Alex", "store", {"content": "Gift", "amount": "70", "hidden_from": "Sam", **october})
    monthly = Occurrence("monthly", date(2026, 10, 1), date(2026, 11, 1), NOW)
    async with tool_context(db, family, "Sam", roles=ROLES, now=NOW, shared=True) as ctx:
        facts = await gather_facts(ctx, monthly)
    assert facts["totals"] == [{"currency": "EUR", "total": "20.00", "count": 1}]

    tomorrow = (NOW + timedelta(days=1)).replace(hour=9)
    await run(db, family, "Alex", "add_event", {"title": "Party", "start": tomorrow.isoformat(), "hidden_from": "Sam"})
    await run(
        db, family, "Alex", "schedule_reminder", {"text": "Ring", "when": tomorrow.isoformat(), "visibility": "private"}
    )
    await run(db, family, "Sam", "add_event", {"title": "Dentist", "start": tomorrow.isoformat()})
    morning = Occurrence("morning", tomorrow.date(), tomorrow.date() + timedelta(days=1), NOW)
    async with tool_context(db, family, "Sam", roles=ROLES, now=NOW, shared=True) as ctx:
        agenda = await gather_facts(ctx, morning)
    assert [e["text"] for e in agenda["events"]] == ["Dentist"] and agenda["reminders"] == []
    async with tool_context(db, family, "Sam", roles=ROLES, now=NOW) as ctx:
        spent = await REGISTRY.run(ctx, "aggregate", {"op": "sum", "field": "amount"})
    assert [(g["currency"], g["value"]) for g in spent["groups"]] == [("EUR", "20.00")]  # nor Sam's own total


# Forget me ---------------------------------------------------------------------------------------------------------


async def test_forget_me_removes_every_private_row_and_nothing_anyone_else_wrote(
    db: Database, family: Family, admin_conn: asyncpg.Connection
) -> None:
    when = (NOW + timedelta(days=1)).isoformat()
    await run(db, family, "Mia", "store", {"content": "Locker code 4312", "kind": "fact", "visibility": "private"})
    await run(db, family, "Mia", "store", {"content": "Mia likes pizza", "kind": "fact"})
    await run(db, family, "Mia", "add_event", {"title": "Diary day", "start": "2026-12-01", "visibility": "private"})
    await run(db, family, "Mia", "schedule_reminder", {"text": "Secret", "when": when, "visibility": "private"})
    await run(
        db,
        family,
        "Mia",
        "add_list_items",
        {"list_name": "wishes", "items": [{"text": "pony"}], "visibility": "private"},
    )
    await run(db, family, "Mia", "store", {"content": "Dad's present", "kind": "plan", "hidden_from": "Sam"})
    dentist = await run(
        db, family, "Sam", "add_event", {"title": "Dentist for Mia", "start": "2026-12-03T09:00", "whose": "Mia"}
    )
    pills = await run(db, family, "Sam", "schedule_reminder", {"text": "Mia: pills", "when": when, "recipient": "Mia"})
    about = await run(
        db, family, "Alex", "store", {"content": "Mia's shoe size is 34", "kind": "fact", "person": "Mia"}
    )
    milk = await run(db, family, "Sam", "add_list_items", {"items": [{"text": "milk for Mia"}]})
    await run(db, family, "Mia", "add_list_items", {"items": [{"text": "diary key"}], "visibility": "private"})

    gone = await run(db, family, "Mia", "forget_me", {})
    assert (gone["private_memories"], gone["events"], gone["reminders"], gone["lists"]) == (2, 1, 1, 1)
    left = await admin_conn.fetch(
        "SELECT content, author_id FROM memories WHERE household_id = $1 ORDER BY id", family.household_id
    )
    assert [(r["content"], r["author_id"]) for r in left] == [
        ("Mia likes pizza", None),
        ("Mia's shoe size is 34", family.id("Alex")),
    ]
    assert about["memory_id"]
    assert await admin_conn.fetchval("SELECT title FROM events WHERE id = $1", dentist["event_id"]) == "Dentist for Mia"
    assert await admin_conn.fetchval("SELECT text FROM reminders WHERE id = $1", pills["reminder_id"]) == "Mia: pills"
    items = await admin_conn.fetch("SELECT text FROM list_items WHERE household_id = $1", family.household_id)
    assert [r["text"] for r in items] == ["milk for Mia"] and milk["items"]  # her private item on a shared list too
    assert (
        await admin_conn.fetchval(
            "SELECT count(*) FROM lists WHERE household_id = $1 AND visibility = 'private'", family.household_id
        )
        == 0
    )


# Helpers ----------------------------------------------------------------------------------------------------------


def _ics(uid: str, title: str) -> IcsEvent:
    return IcsEvent(
        uid=uid,
        title=title,
        starts_at=NOW + timedelta(days=3),
        ends_at=None,
        all_day=False,
        timezone="Europe/Berlin",
        rrule=None,
    )


async def _inbox(admin: asyncpg.Connection, family: Family, member: str) -> int:
    """An inbox row of the member's (a message whose changes undo can take back)."""
    return int(
        await admin.fetchval(
            """INSERT INTO inbox (household_id, user_id, channel, external_id, trace_id)
               VALUES ($1, $2, 'web', gen_random_uuid()::text, 't') RETURNING id""",
            family.household_id,
            family.id(member),
        )
    )


async def _journal(admin: asyncpg.Connection, family: Family, inbox: int, tool: str, result: dict[str, Any]) -> None:
    """The journal entry the engine writes for a tool's effect, which undo reads."""
    await admin.execute(
        "INSERT INTO journal (household_id, inbox_id, seq, kind, payload) VALUES ($1, $2, 1, 'tool', $3::jsonb)",
        family.household_id,
        inbox,
        json.dumps({"tool": tool, "ok": True, "writes": True, "result": result}),
    )
