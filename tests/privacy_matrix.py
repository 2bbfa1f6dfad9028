"""The privacy and roles matrix every write path is tested against (issue 30): three members — Sam the owner, Alex
an adult, Mia a child — each meet their own rows, another member's and the household's, each private or shared, of
every kind members share (memories, events, reminders, list items). Every path (the model's tools through the
registry, the web app's forms in Chromium, its JSON endpoints, Telegram's tick buttons, the command line) must give
the same answer, `expected`:

- another member's private row is not found (404): the member cannot even see it;
- the member's own rows, private or not, change;
- another member's or the household's shared rows change for adults, and are refused (403) to a child — unless
  the write only answers the row (a tick on a list item), which a child may do.

The rows are made through the tools, as a message would make them; `Row.visible` says whether the acting member's
listing must show it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import asyncpg

from tests.system import Family, System, make_family
from tools.context import ToolContext
from tools.registry import default_registry
from tools.storage import households

REGISTRY = default_registry()
ROLES = {"Sam": "owner", "Alex": "adult", "Mia": "child"}
# Whose rows each member meets as "another member's" and "the household's".
OTHER = {"Sam": "Alex", "Alex": "Sam", "Mia": "Alex"}
KINDS = ("memory", "event", "reminder", "list_item")
OWNERS = ("own", "other", "household")
VISIBILITIES = ("shared", "private")
Outcome = Literal["changed", "refused", "not_found"]
STATUS: dict[Outcome, int] = {"changed": 200, "refused": 403, "not_found": 404}


@dataclass(frozen=True)
class Row:
    kind: str
    owner: str  # "own", "other" or "household"
    visibility: str  # "shared" or "private"
    id: int

    @property
    def label(self) -> str:
        return f"{self.owner} {self.visibility} {self.kind} {self.id}"

    @property
    def visible(self) -> bool:
        return self.owner == "own" or self.visibility == "shared"


def expected(role: str, row: Row, *, answers: bool = False) -> Outcome:
    """What a write of a member with `role` to `row` must do; `answers`: the write only answers the row."""
    if not row.visible:
        return "not_found"
    if row.owner == "own" or answers or role != "child":
        return "changed"
    return "refused"


async def family_of_three(admin: asyncpg.Connection, name: str) -> Family:
    family = await make_family(admin, name, {member: "Europe/Berlin" for member in ROLES})
    for member, role in ROLES.items():
        await admin.execute("UPDATE users SET role = $2 WHERE id = $1", family.user_ids[member], role)
    return family


@asynccontextmanager
async def as_member(system: System, family: Family, member: str) -> AsyncIterator[ToolContext]:
    """A tool context of the member, as the engine builds one (their household transaction, the members' roles)."""
    user_id = family.user_ids[member]
    async with system.deps.db.household(family.household_id, user_id) as conn:
        yield ToolContext(
            conn=conn,
            household_id=family.household_id,
            user_id=user_id,
            timezone="Europe/Berlin",
            now=datetime.now(UTC),
            embedder=system.deps.embedder,
            members=await households.members(conn, family.household_id),
        )


async def call(system: System, family: Family, member: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    async with as_member(system, family, member) as ctx:
        return await REGISTRY.run(ctx, tool, REGISTRY.validate(tool, args))


async def rows_for(system: System, family: Family, actor: str, kinds: tuple[str, ...] = KINDS) -> list[Row]:
    """Every kind of row the actor meets: their own, another member's and the household's, private and shared.
    A household reminder cannot be private (it reaches everyone): that cell holds the private reminder another
    member set for themselves instead."""
    other = OTHER[actor]
    soon = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0).isoformat()
    made = []
    for kind in kinds:
        for owner in OWNERS:
            for visibility in VISIBILITIES:
                author = actor if owner == "own" else other
                audience = {"visibility": "private" if visibility == "private" else "household"}
                whose = {"own": "self", "other": "self", "household": "household"}[owner]
                label = f"{owner}-{visibility}"
                if kind == "memory":
                    created = await call(
                        system, family, author, "store", {"content": f"note {label}", "kind": "note", **audience}
                    )
                    row_id = created["memory_id"]
                elif kind == "event":
                    args = {"title": f"event {label}", "start": soon, "whose": whose, **audience}
                    row_id = (await call(system, family, author, "add_event", args))["event_id"]
                elif kind == "reminder":
                    recipient = "self" if owner != "household" or visibility == "private" else "household"
                    args = {"text": f"reminder {label}", "when": soon, "recipient": recipient, **audience}
                    row_id = (await call(system, family, author, "schedule_reminder", args))["reminder_id"]
                else:
                    list_name = f"{author.lower()}'s list" if owner == "other" else "shopping"
                    args = {"list_name": list_name, "items": [{"text": f"item {label}"}], **audience}
                    row_id = (await call(system, family, author, "add_list_items", args))["items"][0]["item_id"]
                made.append(Row(kind, owner, visibility, int(row_id)))
    return made


async def changed(admin: asyncpg.Connection, row: Row, marker: str) -> bool:
    """Whether the write the paths make reached the row: a memory's content or a list item's quantity is now
    `marker`; an event or a reminder is cancelled."""
    if row.kind == "memory":
        return bool(await admin.fetchval("SELECT content = $2 FROM memories WHERE id = $1", row.id, marker))
    if row.kind == "list_item":
        return bool(await admin.fetchval("SELECT quantity = $2 FROM list_items WHERE id = $1", row.id, marker))
    table = "events" if row.kind == "event" else "reminders"
    return bool(await admin.fetchval(f"SELECT status = 'cancelled' FROM {table} WHERE id = $1", row.id))


def tool_write(row: Row, marker: str) -> tuple[str, dict[str, Any]]:
    """The change each kind's write makes through the registry (the web app's forms and JSON make the same)."""
    if row.kind == "memory":
        return "update_memory_fields", {"memory_id": row.id, "content": marker}
    if row.kind == "event":
        return "cancel_event", {"event_id": row.id}
    if row.kind == "reminder":
        return "cancel_reminder", {"reminder_id": row.id}
    return "update_list_item", {"item_id": row.id, "quantity": marker}
