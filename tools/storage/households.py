"""Households, members, identities and API tokens."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import asyncpg

from tools.errors import HouseholdError
from tools.infra import vapid
from tools.storage.database import Connection

ROLES = ("owner", "adult", "child")


@dataclass(frozen=True)
class Member:
    id: int
    name: str
    timezone: str
    locale: str
    role: str


@dataclass(frozen=True)
class Principal:
    """Who a request comes from, once a token or a channel identity was resolved."""

    user_id: int
    household_id: int


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def check_name(name: str, what: str, longest: int) -> str:
    name = name.strip()
    if not 1 <= len(name) <= longest:
        raise HouseholdError(f"a {what} name needs 1 to {longest} characters")
    return name


def check_timezone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise HouseholdError(f"unknown timezone {name!r}; use an IANA name such as Europe/Berlin") from exc
    return name


async def create_household(conn: Connection, name: str, timezone: str = "UTC") -> int:
    """Run on an owner connection (RLS forbids the app role from creating households). The household's VAPID key
    (its members' push messages are signed with it) is made with it."""
    return int(
        await conn.fetchval(
            "INSERT INTO households (name, timezone, vapid_private_key) VALUES ($1, $2, $3) RETURNING id",
            check_name(name, "household", 200),
            check_timezone(timezone),
            vapid.new_private_key(),
        )
    )


async def find_household(conn: Connection, name_or_id: str) -> int:
    rows = await conn.fetch(
        "SELECT id FROM households WHERE id::text = $1 OR lower(name) = lower($1) ORDER BY id", name_or_id
    )
    if len(rows) != 1:
        raise HouseholdError(
            f"no household named {name_or_id!r}"
            if not rows
            else f"several households are named {name_or_id!r}; use the id"
        )
    return int(rows[0]["id"])


async def add_member(
    conn: Connection,
    household_id: int,
    name: str,
    *,
    timezone: str,
    locale: str = "en",
    role: str = "adult",
) -> tuple[int, str]:
    """Add a member and return (user id, API token). Only the token's hash is stored."""
    if role not in ROLES:
        raise HouseholdError(f"role must be one of {', '.join(ROLES)}")
    token = "faa_" + secrets.token_urlsafe(24)
    try:
        user_id = await conn.fetchval(
            """INSERT INTO users (household_id, name, timezone, locale, role, api_token_hash)
               VALUES ($1, $2, $3, $4, $5, $6) RETURNING id""",
            household_id,
            check_name(name, "member", 100),
            check_timezone(timezone),
            locale,
            role,
            hash_token(token),
        )
    except asyncpg.UniqueViolationError as exc:
        raise HouseholdError(f"the household already has a member named {name!r}") from exc
    await conn.execute(
        "INSERT INTO user_identities (household_id, user_id, channel, external_id, preferred) "
        "VALUES ($1, $2, 'web', $3, true)",
        household_id,
        user_id,
        str(user_id),
    )
    return int(user_id), token


async def find_member(conn: Connection, household_id: int, name: str) -> Member:
    row = await conn.fetchrow(
        "SELECT id, name, timezone, locale, role FROM users WHERE household_id = $1 AND lower(name) = lower($2)",
        household_id,
        name,
    )
    if row is None:
        raise HouseholdError(f"no member named {name!r} in household {household_id}")
    return Member(**dict(row))


async def the_only_household(conn: Connection) -> int:
    """The id of the one household there is (an owner's connection); HouseholdError when there are none or several."""
    ids = [row["id"] for row in await conn.fetch("SELECT id FROM households ORDER BY id LIMIT 2")]
    if len(ids) != 1:
        raise HouseholdError("name the household with --household (there is not exactly one)")
    return int(ids[0])


async def member_role(conn: Connection, household_id: int, user_id: int) -> str | None:
    """A current member's role; None when the household has no such member (or they were forgotten)."""
    role: str | None = await conn.fetchval(
        "SELECT role FROM users WHERE household_id = $1 AND id = $2 AND forgotten_at IS NULL", household_id, user_id
    )
    return role


async def member_name(conn: Connection, user_id: int) -> str:
    return str(await conn.fetchval("SELECT name FROM users WHERE id = $1", user_id))


async def members(conn: Connection, household_id: int) -> tuple[Member, ...]:
    rows = await conn.fetch(
        """SELECT id, name, timezone, locale, role FROM users
           WHERE household_id = $1 AND forgotten_at IS NULL ORDER BY id""",
        household_id,
    )
    return tuple(Member(**dict(row)) for row in rows)


async def resolve_token(conn: Connection, token: str) -> Principal | None:
    row = await conn.fetchrow("SELECT user_id, household_id FROM faa_resolve_api_token($1)", hash_token(token))
    return None if row is None else Principal(int(row["user_id"]), int(row["household_id"]))


async def household_timezone(conn: Connection, household_id: int) -> str:
    timezone = await conn.fetchval("SELECT timezone FROM households WHERE id = $1", household_id)
    if timezone is None:
        raise HouseholdError(f"no household {household_id}")
    return str(timezone)


async def update_member(conn: Connection, household_id: int, user_id: int, *, timezone: str, locale: str) -> bool:
    """Change a member's timezone and language; whether there was such a (current) member."""
    status = await conn.execute(
        """UPDATE users SET timezone = $3, locale = $4
           WHERE household_id = $1 AND id = $2 AND forgotten_at IS NULL""",
        household_id,
        user_id,
        check_timezone(timezone),
        locale,
    )
    return status != "UPDATE 0"


async def rename_member(conn: Connection, household_id: int, user_id: int, name: str) -> None:
    try:
        await conn.execute(
            "UPDATE users SET name = $3 WHERE household_id = $1 AND id = $2 AND forgotten_at IS NULL",
            household_id,
            user_id,
            check_name(name, "member", 100),
        )
    except asyncpg.UniqueViolationError as exc:
        raise HouseholdError(f"the household already has a member named {name!r}") from exc


async def set_role(conn: Connection, household_id: int, user_id: int, role: str) -> None:
    """A member's new role (callers keep the owner the owner)."""
    if role not in ROLES:
        raise HouseholdError(f"role must be one of {', '.join(ROLES)}")
    await conn.execute(
        "UPDATE users SET role = $3 WHERE household_id = $1 AND id = $2 AND forgotten_at IS NULL",
        household_id,
        user_id,
        role,
    )
