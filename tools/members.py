"""Managing a household's members: rename one, change their role, remove them — for the owner only (the web app's
household page and the `faa member` commands, which act with the owner's rights). Not model tools: members are
managed by people, never by a message's model.

Removing a member is their "forget everything about me" done by the owner: their private rows go, their household
entries stay under "former member", and what others wrote stays as it is (`tools.storage.forgetting`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.errors import HouseholdError, NotPermitted, RowNotFound
from tools.permissions import check_owner
from tools.storage import households
from tools.storage.database import Connection
from tools.storage.forgetting import Forgotten, forget_member
from tools.storage.households import Member

ASSIGNABLE_ROLES = ("adult", "child")


@dataclass(frozen=True)
class Manager:
    """Who manages: a member (by id and role), or the command line (`member_id` None, the owner's rights)."""

    role: str
    member_id: int | None = None


async def _member(conn: Connection, household_id: int, member_id: int, tool: str) -> Member:
    for member in await households.members(conn, household_id):
        if member.id == member_id:
            return member
    raise RowNotFound(tool, f"there is no member {member_id}", for_member="There is no such member.")


async def rename_member(conn: Connection, household_id: int, by: Manager, member_id: int, name: str) -> Member:
    """Give a member another name (unique in the household)."""
    check_owner(by.role, "rename_member")
    member = await _member(conn, household_id, member_id, "rename_member")
    await households.rename_member(conn, household_id, member_id, name)
    return Member(member.id, households.check_name(name, "member", 100), member.timezone, member.locale, member.role)


async def set_role(conn: Connection, household_id: int, by: Manager, member_id: int, role: str) -> Member:
    """Make a member an adult or a child; the owner stays the owner."""
    check_owner(by.role, "set_role")
    if role not in ASSIGNABLE_ROLES:
        raise HouseholdError(f"a member's role is one of {', '.join(ASSIGNABLE_ROLES)}")
    member = await _member(conn, household_id, member_id, "set_role")
    if member.role == "owner":
        raise NotPermitted("set_role", "the owner stays the owner", rule="owner", for_member="The owner stays owner.")
    await households.set_role(conn, household_id, member_id, role)
    return Member(member.id, member.name, member.timezone, member.locale, role)


async def remove_member(conn: Connection, household_id: int, by: Manager, member_id: int) -> Forgotten:
    """Remove a member as their "forget everything about me" would (the owner cannot remove themselves)."""
    check_owner(by.role, "remove_member")
    member = await _member(conn, household_id, member_id, "remove_member")
    if member.role == "owner":
        raise NotPermitted(
            "remove_member", "the owner cannot be removed", rule="owner", for_member="The owner cannot be removed."
        )
    return await forget_member(conn, household_id, member_id, None)
