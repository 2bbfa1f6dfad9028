"""The shared-list tools: add_list_items, show_list, update_list_item, remove_list_item and clear_done_items, over
`tools.storage.lists`. A household has as many lists as it wants (shopping, to-do, packing for a trip, …); the
common names in English, German and Chinese all reach the same list ("Einkaufsliste" is the shopping list)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Self

import asyncpg
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, model_validator

from tools.audience import HiddenFromArg, VisibilityArg, audience, name_of
from tools.context import ToolContext
from tools.errors import RowNotFound, ToolRetry
from tools.fields import RowId, blank_is_none
from tools.permissions import check_change
from tools.storage import lists as stored
from tools.storage.households import Member
from tools.storage.visibility import EVERYONE

Kind = Literal["shopping", "todo", "packing", "other"]
ListName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=60)]
ItemText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Quantity = Annotated[
    Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)] | None,
    BeforeValidator(lambda v: str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else blank_is_none(v)),
]
Assignee = Annotated[
    Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)] | None,
    BeforeValidator(blank_is_none),
]

# What families call the common lists, each reaching the one list of that kind.
_KIND_WORDS: dict[str, tuple[str, ...]] = {
    "shopping": (
        "shopping",
        "groceries",
        "grocery",
        "einkauf",
        "einkaufs",
        "einkaufen",
        "einkaufsliste",
        "购物",
        "买菜",
        "采购",
    ),
    "todo": ("todo", "to-do", "to do", "tasks", "chores", "aufgaben", "erledigen", "待办", "任务", "家务"),
    "packing": ("packing", "pack", "packliste", "packen", "行李", "打包"),
}
# "list" as a word of its own ("shopping list", "to-do-list") or a Chinese suffix; a word ending in it is kept as
# typed ("wishlist"), unless it is a common list's name ("Einkaufsliste", "shoppinglist").
_LIST_SUFFIX = re.compile(r"(?:(?:\s+|\s*-\s*)(?:list|liste)|\s*(?:清单|单子|列表))+$", re.I)
_ATTACHED_SUFFIX = re.compile(r"(?:list|liste)$", re.I)
_ME = frozenset({"me", "myself", "i", "ich", "mich", "mir", "我", "self"})
_NOBODY = frozenset({"nobody", "no one", "none", "niemand", "没人", "无"})


class NewListItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: ItemText = Field(description="the item, short, e.g. 'milk', 'take out the bins'")
    quantity: Quantity = Field(None, description="how much, as said, e.g. '2 kg', '6', 'a dozen'")
    assignee: Assignee = Field(None, description="the member who takes it on, by name")


class AddListItemsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    list_name: ListName = Field("shopping", description="the list; created if the household has none of that name")
    items: Annotated[list[NewListItem], Field(max_length=50)] = Field(description="none: only start the list")
    visibility: VisibilityArg = "household"
    hidden_from: HiddenFromArg = None


class ShowListArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    list_name: Annotated[ListName | None, BeforeValidator(blank_is_none)] = Field(
        None, description="one list; null: every list"
    )
    include_done: bool = Field(False, description="also the ticked items not yet cleared")


class ItemArgs(BaseModel):
    """One item on a list, named by its id or by its words."""

    model_config = ConfigDict(extra="forbid")

    item_id: RowId | None = Field(None, description="the item's id from show_list or add_list_items")
    item: Annotated[ItemText | None, BeforeValidator(blank_is_none)] = Field(
        None, description="or the item's words, e.g. 'milk'"
    )
    list_name: Annotated[ListName | None, BeforeValidator(blank_is_none)] = Field(
        None, description="the list to look in; null: every list"
    )

    @model_validator(mode="after")
    def _which(self) -> Self:
        if (self.item_id is None) == (self.item is None):
            raise ValueError("give exactly one of item_id or item")
        return self


class UpdateListItemArgs(ItemArgs):
    done: bool | None = Field(None, description="true: ticked (bought, done); false: open again")
    assignee: Assignee = Field(None, description='the member who takes it on; "nobody" to unassign')
    quantity: Quantity = None

    @model_validator(mode="after")
    def _what(self) -> UpdateListItemArgs:
        if self.done is None and self.assignee is None and self.quantity is None:
            raise ValueError("give at least one of done, assignee or quantity")
        return self


class RemoveListItemArgs(ItemArgs):
    """The item to take off its list: nothing else to say."""


class ClearDoneItemsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    list_name: ListName = Field("shopping", description="the list to clear of ticked items")
    everything: bool = Field(False, description="true: take every item off, open ones too (the list emptied)")


class ListItem(BaseModel):
    item_id: int
    list_name: str
    text: str
    quantity: str | None = None
    assignee: str | None = None
    done: bool = False
    visibility: str = "household"
    hidden_from: str | None = Field(None, description="the member it is kept from (a surprise for them)")
    added_by: str | None = None
    edited_by: str | None = Field(None, description="the member who changed it last, when not who added it")


class ListInfo(BaseModel):
    list_id: int
    list_name: str
    kind: str
    created: bool = False
    visibility: str = "household"
    hidden_from: str | None = None


class AddedItems(ListInfo):
    items: list[ListItem]


class ListView(BaseModel):
    list_id: int
    list_name: str
    kind: str
    items: list[ListItem]
    visibility: str = "household"
    hidden_from: str | None = None
    author: str | None = None


class ShowListResult(BaseModel):
    lists: list[ListView]


class UpdatedItem(ListItem):
    previous: dict[str, Any] = Field(description="the item's values before this change, for undo")


class ClearedItems(BaseModel):
    list_name: str
    cleared: list[int]


class RemovedItem(ClearedItems):
    text: str = Field(description="the item taken off; `cleared` holds its id")


def kinds_named(text: str) -> set[str]:
    """The kinds of list a message names by their words ("auf die einkaufsliste": shopping; "die liste": none; "auf
    die liste packen" puts things on a list: "pack" is a verb there, and names the packing list only as a list's
    name)."""
    lowered = _PUT.sub(r"\1", text.lower())
    return {kind for kind, words in _KIND_WORDS.items() if any(word in lowered for word in words)}


# Putting things on a list, said with the verb that also names a packing list: "auf die liste packen", "pack it on".
_PUT = re.compile(r"(?<=\blist)(e?\s+)pack\w*")


def canonical_name(name: str) -> tuple[str, Kind]:
    """The list a name means, and its kind: 'Einkaufsliste', 'shopping list' and '购物清单' are 'shopping'; a name
    of its own ('packing for the trip') is kept, with the kind its words suggest."""
    bare = _LIST_SUFFIX.sub("", name.strip()).strip() or name.strip()
    lowered = bare.lower()
    for kind, words in _KIND_WORDS.items():
        if lowered in words or _ATTACHED_SUFFIX.sub("", lowered) in words:
            return kind, kind  # type: ignore[return-value]
    for kind, words in _KIND_WORDS.items():
        if any(word in lowered for word in words):
            return bare, kind  # type: ignore[return-value]
    return bare, "other"


def _item(row: asyncpg.Record, members: tuple[Member, ...]) -> ListItem:
    edited = row["updated_by"] is not None and row["updated_by"] != row["created_by"]
    return ListItem(
        item_id=row["id"],
        list_name=row["list_name"],
        text=row["text"],
        quantity=row["quantity"],
        assignee=row["assignee"],
        done=row["done_at"] is not None,
        visibility=row["visibility"],
        hidden_from=name_of(members, row["hidden_from"]),
        added_by=row["creator"],
        edited_by=row["editor"] if edited else None,
    )


async def _items(ctx: ToolContext, rows: list[asyncpg.Record]) -> list[ListItem]:
    members = await ctx.household_members()
    return [_item(row, members) for row in rows]


async def _member_id(ctx: ToolContext, tool: str, name: str) -> int:
    if name.lower() in _ME:
        return ctx.user_id
    members = await ctx.household_members()
    for member in members:
        if member.name.lower() == name.lower():
            return member.id
    names = ", ".join(member.name for member in members)
    raise ToolRetry(
        tool,
        f"{name!r} is not a member of the household; members: {names}",
        for_member=f"{name!r} is not a member of the household.",
    )


async def _existing(ctx: ToolContext, tool: str, name: str) -> asyncpg.Record:
    row = await stored.find_list(ctx.conn, ctx.household_id, canonical_name(name)[0])
    if row is None:
        row = await stored.find_list(ctx.conn, ctx.household_id, name)
    if row is None:
        known = [r["name"] for r in await stored.all_lists(ctx.conn, ctx.household_id)]
        raise RowNotFound(
            tool,
            f"there is no list {name!r}; the lists are: {', '.join(known) or 'none yet'}",
            for_member=f"There is no list {name!r}.",
        )
    return row


async def add_list_items(ctx: ToolContext, args: AddListItemsArgs) -> AddedItems:
    """Put items on a shared list ("add milk and eggs to the shopping list", "put 2 kg flour on the list").

    One item per thing, its quantity apart ("2 kg", "6"), and an assignee when someone takes it on. The list is
    created when the household does not have it yet; with no items this only starts a list ("new packing list
    for the trip"). Lists are for things to buy, to do or to pack; every member sees and edits them, unless
    `visibility: "private"` keeps the new items (and a list of its own name this call creates; the shopping, to-do
    and packing lists are everyone's) to the member who says so ("only for me"), or `hidden_from` keeps them from
    one member ("gift ideas for Sam, don't tell Sam"). Returns the list (created: whether it is new) and the new
    items with their item_ids.
    """
    tool = "add_list_items"
    kept = await audience(ctx, tool, args.visibility, args.hidden_from)
    assignees = [None if i.assignee is None else await _member_id(ctx, tool, i.assignee) for i in args.items]
    if kept.hidden_from is not None and kept.hidden_from in assignees:
        raise ToolRetry(tool, "an item is assigned to the member it is hidden from; assign it to someone else")
    if kept.private and any(who not in (None, ctx.user_id) for who in assignees):
        raise ToolRetry(tool, "a private item is the member's own: assign it to nobody or to the member")
    name, kind = canonical_name(args.list_name)
    found = await stored.find_list(ctx.conn, ctx.household_id, name)
    # The shopping, to-do or packing list is the household's whoever starts it, and only the items are kept: a
    # private first item must not give the others a second list of the same name.
    starts = EVERYONE if name == kind != "other" else kept
    row = found or await stored.ensure_list(ctx.conn, ctx.household_id, name, kind, ctx.user_id, starts)
    new = [stored.NewItem(i.text, i.quantity, who) for i, who in zip(args.items, assignees, strict=True)]
    rows = await stored.add_items(
        ctx.conn, ctx.household_id, int(row["id"]), new, created_by=ctx.user_id, inbox_id=ctx.inbox_id, audience=kept
    )
    return AddedItems(
        list_id=row["id"],
        list_name=row["name"],
        kind=row["kind"],
        created=found is None and bool(row["created"]),
        visibility=row["visibility"],
        hidden_from=name_of(await ctx.household_members(), row["hidden_from"]),
        items=await _items(ctx, rows),
    )


async def show_list(ctx: ToolContext, args: ShowListArgs) -> ShowListResult:
    """What is on a shared list ("what's on the shopping list?"): its open items, with quantity and assignee.

    Without list_name, every list of the household. Ticked items that were not cleared yet come too with
    include_done. Returns the lists with their items (item_id, text, quantity, assignee, done).
    """
    if args.list_name is not None:
        chosen = [await _existing(ctx, "show_list", args.list_name)]
    else:
        chosen = await stored.all_lists(ctx.conn, ctx.household_id)
    views = []
    members = await ctx.household_members()
    for row in chosen:
        rows = await stored.items(ctx.conn, ctx.household_id, int(row["id"]), include_done=args.include_done)
        views.append(
            ListView(
                list_id=row["id"],
                list_name=row["name"],
                kind=row["kind"],
                items=await _items(ctx, rows),
                visibility=row["visibility"],
                hidden_from=name_of(members, row["hidden_from"]),
                author=row["creator"],
            )
        )
    return ShowListResult(lists=views)


async def update_list_item(ctx: ToolContext, args: UpdateListItemArgs) -> UpdatedItem:
    """Tick off, reopen, assign or change the quantity of one item on a shared list ("bought the milk",
    "Tom takes the bins task").

    Name the item by item_id or by its words; done true ticks it. Returns the item as it now is.
    """
    tool = "update_list_item"
    assignee_id = None
    if args.assignee is not None and args.assignee.lower() not in _NOBODY:
        assignee_id = await _member_id(ctx, tool, args.assignee)
    item_id = args.item_id
    if item_id is None:
        item_id = await _match(ctx, tool, args.item, args.list_name, ticking=bool(args.done))
    before = await stored.by_ids(ctx.conn, ctx.household_id, [item_id], lock=True)
    if not before:
        raise RowNotFound(tool, f"there is no item {item_id} on any list; take ids from show_list")
    ticks_only = args.assignee is None and args.quantity is None  # ticking answers the list: anyone may
    await check_change(ctx, tool, f"item {item_id}", before[0]["created_by"], addressed=ticks_only)
    if assignee_id is not None and assignee_id == before[0]["hidden_from"]:
        raise ToolRetry(tool, "the item is hidden from that member; assign it to someone else")
    row = await stored.update_item(
        ctx.conn,
        ctx.household_id,
        item_id,
        done=args.done,
        assignee_id=assignee_id,
        set_assignee=args.assignee is not None,
        quantity=args.quantity,
        set_quantity=args.quantity is not None,
        by=ctx.user_id,
    )
    if row is None:
        raise RowNotFound(tool, f"item {item_id} is no longer on a list")
    previous = before[0]
    return UpdatedItem(
        **(await _items(ctx, [row]))[0].model_dump(),
        previous={
            "done_at": None if previous["done_at"] is None else previous["done_at"].isoformat(),
            "assignee_id": previous["assignee_id"],
            "quantity": previous["quantity"],
            "updated_by": previous["updated_by"],
        },
    )


async def remove_list_item(ctx: ToolContext, args: RemoveListItemArgs) -> RemovedItem:
    """Take one item off a shared list without ticking it: not needed after all ("take crisps off the list",
    "nimm die Chips wieder runter", "把薯片从清单上删掉").

    Name the item by item_id or by its words. Returns the list, the item's words and its id.
    """
    tool = "remove_list_item"
    item_id = args.item_id if args.item_id is not None else await _match(ctx, tool, args.item, args.list_name)
    before = await stored.by_ids(ctx.conn, ctx.household_id, [item_id], lock=True)
    if not before:
        raise RowNotFound(tool, f"there is no item {item_id} on any list; take ids from show_list")
    await check_change(ctx, tool, f"item {item_id}", before[0]["created_by"])
    await stored.set_cleared(ctx.conn, ctx.household_id, [item_id], cleared=True, by=ctx.user_id)
    return RemovedItem(list_name=before[0]["list_name"], text=before[0]["text"], cleared=[item_id])


async def _match(ctx: ToolContext, tool: str, item: str | None, list_name: str | None, *, ticking: bool = False) -> int:
    """The one item the words name: an exact match first, then items containing the words (or contained in
    them); open items before ticked ones when the member ticks something off."""
    assert item is not None
    list_id = None if list_name is None else int((await _existing(ctx, tool, list_name))["id"])
    rows = await stored.items(ctx.conn, ctx.household_id, list_id, include_done=True)
    words = item.lower()
    if ticking:
        rows = sorted(rows, key=lambda r: r["done_at"] is not None)
    exact = [r for r in rows if r["text"].lower() == words]
    near = exact or [r for r in rows if words in r["text"].lower() or r["text"].lower() in words]
    if len({r["text"].lower() for r in near}) == 1:
        return int(near[0]["id"])
    shown = "; ".join(f"[{r['id']}] {r['text']} ({r['list_name']})" for r in (near or rows)[:15])
    if not near:
        raise ToolRetry(tool, f"no item matches {item!r}; the items are: {shown or 'none'}")
    raise ToolRetry(tool, f"{item!r} matches several items, give its item_id: {shown}")


async def clear_done_items(ctx: ToolContext, args: ClearDoneItemsArgs) -> ClearedItems:
    """Take the ticked (bought, done) items off a shared list ("clear the bought items"), or with `everything` every
    item ("empty the shopping list").

    Returns the ids of the items cleared; without `everything` open items stay.
    """
    tool = "clear_done_items"
    row = await _existing(ctx, tool, args.list_name)
    await check_change(ctx, tool, f"the {row['name']} list", row["created_by"])  # it takes off everyone's items
    cleared = await stored.clear_done(
        ctx.conn, ctx.household_id, int(row["id"]), by=ctx.user_id, everything=args.everything
    )
    return ClearedItems(list_name=row["name"], cleared=cleared)
