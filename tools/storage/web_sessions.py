"""The web app's sessions and its setup link: one-time codes spent for a session, cookies resolved to a member.

Codes and session tokens are random secrets; only their SHA-256 is stored. Spending a code and resolving a
cookie happen before any household is known, through the narrow SECURITY DEFINER doors of 0011_web_sessions.sql.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from tools.storage.database import Connection
from tools.storage.households import Principal, check_name, check_timezone, hash_token
from tools.storage.identities import normalise_code

SESSION_TTL = timedelta(days=30)
SETUP_TTL = timedelta(days=7)


@dataclass(frozen=True)
class SessionMember:
    """The member a session cookie belongs to, with what every page shows of them."""

    user_id: int
    household_id: int
    name: str
    role: str
    locale: str
    timezone: str
    household_name: str

    @property
    def principal(self) -> Principal:
        return Principal(self.user_id, self.household_id)

    @property
    def adult(self) -> bool:
        return self.role in ("owner", "adult")


def _hash(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


async def needs_setup(conn: Connection) -> bool:
    """Whether the database has no household yet (an owner's connection: the app role sees none anyway)."""
    return not await conn.fetchval("SELECT EXISTS (SELECT 1 FROM households)")


async def create_setup_code(conn: Connection, ttl: timedelta = SETUP_TTL) -> str:
    """A new setup code on an owner's connection; codes printed before it and not spent stop working."""
    code = secrets.token_urlsafe(24)
    await conn.execute("DELETE FROM setup_codes WHERE used_at IS NULL")
    await conn.execute("INSERT INTO setup_codes (code_hash, expires_at) VALUES ($1, now() + $2)", _hash(code), ttl)
    return code


async def setup_code_state(conn: Connection, code: str) -> Literal["open", "used", "gone"]:
    """Whether a setup code can still make the household: "open", "used" (it made one) or "gone" (expired,
    replaced by a newer code, or unknown)."""
    state = await conn.fetchval("SELECT faa_setup_code_state($1)", _hash(code))
    return "open" if state == "open" else "used" if state == "used" else "gone"


async def setup_household(
    conn: Connection, code: str, *, household: str, timezone: str, member: str, locale: str
) -> tuple[Principal, str] | None:
    """Spend the setup code: the household, its owner and the owner's session token; `None` for a spent,
    expired or unknown code. Names and timezone are checked first (HouseholdError)."""
    token = new_token()
    row = await conn.fetchrow(
        "SELECT user_id, household_id FROM faa_setup_household($1, $2, $3, $4, $5, $6, $7, $8)",
        _hash(code),
        check_name(household, "household", 200),
        check_timezone(timezone),
        check_name(member, "member", 100),
        locale,
        hash_token("faa_" + secrets.token_urlsafe(24)),  # an API token nobody holds until one is issued
        _hash(token),
        SESSION_TTL,
    )
    return None if row is None else (Principal(int(row["user_id"]), int(row["household_id"])), token)


async def open_session(conn: Connection, code: str) -> tuple[Principal, str] | None:
    """Spend a sign-in code (an invite code) for a new session; `None` for a spent, expired or unknown code."""
    token = new_token()
    code_hash = hashlib.sha256(normalise_code(code).encode()).digest()  # as `identities` hashes invite codes
    row = await conn.fetchrow(
        "SELECT user_id, household_id FROM faa_open_web_session($1, $2, $3)", code_hash, _hash(token), SESSION_TTL
    )
    return None if row is None else (Principal(int(row["user_id"]), int(row["household_id"])), token)


async def resolve(conn: Connection, token: str) -> SessionMember | None:
    row = await conn.fetchrow("SELECT * FROM faa_resolve_web_session($1)", _hash(token))
    return None if row is None else SessionMember(**dict(row))


async def close(conn: Connection, token: str) -> None:
    """End the session, and drop the household's expired ones (inside its household's transaction)."""
    await conn.execute("DELETE FROM web_sessions WHERE token_hash = $1 OR expires_at < now()", _hash(token))
