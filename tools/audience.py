"""Who sees what a member writes: the `visibility` and `hidden_from` arguments of every tool that creates a
memory, event, reminder, list or list item, and the `set_visibility` tool that changes them afterwards.

`visibility: "private"` keeps a row to its author ("only for me", "nur für mich", "私密"); `hidden_from: "Sam"` keeps
a household row from one member and shows it to everyone else ("a surprise for Sam"). PostgreSQL enforces both
(`tools.storage.visibility`); here the model's words become an `Audience`, or a refusal it can act on.
`set_visibility` is not a model tool (the model sets who sees a row when it writes it, and `update_memory_fields`
changes it for a memory): the web app's toggle calls it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from tools.context import ToolContext
from tools.errors import RowNotFound, ToolRetry
from tools.fields import RowId, blank_is_none
from tools.permissions import check_audience
from tools.storage import events as stored_events
from tools.storage import lists as stored_lists
from tools.storage import memories as stored_memories
from tools.storage import reminders as stored_reminders
from tools.storage.forgetting import FORMER_MEMBER
from tools.storage.households import Member
from tools.storage.visibility import Audience, Table, Visibility, set_audience

VISIBILITY_HELP = (
    '"household" (default): every member sees it; "private": only the member who says it sees it '
    '(for "only for me", "keep it private", "don\'t tell anyone")'
)
HIDDEN_FROM_HELP = (
    "a member's name: everyone except that member sees it (a surprise for them, \"don't tell Sam\"); "
    'only with visibility "household"'
)

VisibilityArg = Annotated[Visibility, Field(description=VISIBILITY_HELP)]
HiddenFromArg = Annotated[
    Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)] | None,
    BeforeValidator(blank_is_none),
    Field(description=HIDDEN_FROM_HELP),
]
Kind = Literal["memory", "event", "reminder", "list", "list_item"]
_TABLES: dict[str, Table] = {
    "memory": "memories",
    "event": "events",
    "reminder": "reminders",
    "list": "lists",
    "list_item": "list_items",
}
_ID_HINTS = {
    "memory": "find the memory_id with search",
    "event": "list_events shows the event_ids",
    "reminder": "list_reminders shows the reminder_ids",
    "list": "show_list shows the lists",
    "list_item": "show_list shows the item_ids",
}


async def audience(ctx: ToolContext, tool: str, visibility: Visibility, hidden_from: str | None) -> Audience:
    """The audience a call's `visibility` and `hidden_from` ask for; ToolRetry when they contradict each other,
    name no member (or the asking one), or ask for privacy in a group chat, where it cannot be kept."""
    if hidden_from is None:
        wanted = Audience(visibility)
    elif visibility == "private":
        raise ToolRetry(tool, 'give visibility "private" or hidden_from, not both: private already hides it from all')
    else:
        wanted = Audience("household", await _member(ctx, tool, hidden_from))
    if ctx.shared and wanted != Audience():
        raise ToolRetry(
            tool,
            "this is a group chat, where nothing stays private; store it for the household, or tell the member to "
            "say it in a private chat",
            for_member="This is a group chat: tell me in a private chat to keep it private.",
        )
    return wanted


async def _member(ctx: ToolContext, tool: str, name: str) -> int:
    members = await ctx.household_members()
    for member in members:
        if member.name.lower() == name.strip().lower():
            if member.id == ctx.user_id:
                raise ToolRetry(tool, "hidden_from names the member who asks; a row cannot be kept from its author")
            return member.id
    names = ", ".join(sorted(m.name for m in members if m.id != ctx.user_id))
    raise ToolRetry(
        tool,
        f"hidden_from: no member named {name!r}; use one of: {names}",
        for_member=f"There is no member named {name!r}.",
    )


def name_of(members: tuple[Member, ...], member_id: int | None) -> str | None:
    """A member's name as tools show it (a member forgotten since: "former member")."""
    if member_id is None:
        return None
    return next((m.name for m in members if m.id == member_id), FORMER_MEMBER)


async def shown_audience(ctx: ToolContext, row: Any) -> dict[str, str | None]:
    """A row's `visibility` and `hidden_from` (a member's name), as tools return them."""
    hidden = row["hidden_from"]
    name = None if hidden is None else name_of(await ctx.household_members(), hidden)
    return {"visibility": row["visibility"], "hidden_from": name}


class SetVisibilityArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Kind = Field(description="what the id names")
    id: RowId = Field(description="the memory_id, event_id, reminder_id, list_id or item_id")
    visibility: VisibilityArg = "household"
    hidden_from: HiddenFromArg = None


class VisibilityChanged(BaseModel):
    kind: Kind
    id: int
    visibility: Visibility
    hidden_from: str | None = None
    previous: dict[str, Any] = Field(description="who could see it before this change, for undo")


async def set_visibility(ctx: ToolContext, args: SetVisibilityArgs) -> VisibilityChanged:
    """Change who sees something already stored: make a memory, event, reminder, list or list item private to the
    member who made it (visibility "private"), the household's again ("household"), or keep it from one member
    (hidden_from, a surprise). Only the member who made it can change this; a reminder kept private must be for
    its author alone. Returns who sees it now."""
    tool = "set_visibility"
    row = await _locked(ctx, args.kind, args.id)
    if row is None:
        raise RowNotFound(tool, f"there is no {args.kind} {args.id}; {_ID_HINTS[args.kind]}")
    table = _TABLES[args.kind]
    author = row["author_id"] if table == "memories" else row["created_by"]
    check_audience(ctx, tool, f"{args.kind} {args.id}", author)
    wanted = await audience(ctx, tool, args.visibility, args.hidden_from)
    if table == "reminders":
        _check_reminder(tool, row, wanted, author)
    previous = {"visibility": row["visibility"], "hidden_from": row["hidden_from"], "updated_by": row["updated_by"]}
    await set_audience(ctx.conn, table, ctx.household_id, args.id, wanted, by=ctx.user_id)
    shown = await shown_audience(ctx, {"visibility": wanted.visibility, "hidden_from": wanted.hidden_from})
    return VisibilityChanged(
        kind=args.kind, id=args.id, visibility=wanted.visibility, hidden_from=shown["hidden_from"], previous=previous
    )


def _check_reminder(tool: str, row: Any, wanted: Audience, author: int | None) -> None:
    """A reminder is delivered: a private one may reach its author alone, a surprise never the member it is for."""
    recipients = set(row["recipient_ids"])
    if wanted.private and (row["for_household"] or recipients != {author}):
        raise ToolRetry(
            tool,
            "a private reminder is for its author alone, and this one reminds others",
            for_member="This reminder reaches others, so it cannot be private.",
        )
    if wanted.hidden_from is not None and wanted.hidden_from in recipients and not row["for_household"]:
        raise ToolRetry(
            tool,
            "the reminder is for the member it would be kept from",
            for_member="This reminder is for that member.",
        )


async def _locked(ctx: ToolContext, kind: str, row_id: int) -> Any:
    if kind == "memory":
        return await stored_memories.lock(ctx.conn, ctx.household_id, row_id)
    if kind == "event":
        return await stored_events.get(ctx.conn, ctx.household_id, row_id, lock=True)
    if kind == "reminder":
        return await stored_reminders.lock(ctx.conn, ctx.household_id, row_id)
    if kind == "list":
        return await stored_lists.get_list(ctx.conn, ctx.household_id, row_id, lock=True)
    found = await stored_lists.by_ids(ctx.conn, ctx.household_id, [row_id], lock=True)
    return found[0] if found else None
