"""Where a member is reachable: channel identities (one person, several channels), the preferred one, and the
one-time invite codes that link a new sender to a member."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from tools.storage.database import Connection
from tools.storage.households import Principal

# No 0/O, 1/I/L: a code is read off one screen and typed on another.
_CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
_CODE_LENGTH = 10
INVITE_TTL = timedelta(days=7)


@dataclass(frozen=True)
class Address:
    """One way to reach a member: the channel and the recipient that channel's sender understands."""

    channel: str
    recipient: str


async def delivery_address(conn: Connection, user_id: int) -> Address:
    """The member's preferred channel; the most recently linked one when none is marked preferred, and the web
    API (the member's own notification feed) when the member has linked no channel at all."""
    row = await conn.fetchrow(
        """SELECT channel, external_id FROM user_identities WHERE user_id = $1
           ORDER BY preferred DESC, (channel = 'web'), created_at DESC LIMIT 1""",
        user_id,
    )
    if row is None:
        return Address("web", str(user_id))
    return Address(row["channel"], row["external_id"])


async def resolve_identity(conn: Connection, channel: str, external_id: str) -> Principal | None:
    """Who this sender is, before any household is known (a narrow SECURITY DEFINER lookup)."""
    row = await conn.fetchrow("SELECT user_id, household_id FROM faa_resolve_identity($1, $2)", channel, external_id)
    return None if row is None else Principal(int(row["user_id"]), int(row["household_id"]))


def normalise_code(code: str) -> str:
    """What the member typed, the way it was issued: case and separators do not matter."""
    return "".join(ch for ch in code.upper() if ch.isalnum())


def _code_hash(code: str) -> bytes:
    return hashlib.sha256(normalise_code(code).encode()).digest()


async def create_invite(conn: Connection, household_id: int, user_id: int, ttl: timedelta = INVITE_TTL) -> str:
    """A one-time code for this member, shown as `XXXXX-XXXXX`; only its hash is stored."""
    code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(_CODE_LENGTH))
    await conn.execute(
        "INSERT INTO invites (code_hash, household_id, user_id, expires_at) VALUES ($1, $2, $3, now() + $4)",
        _code_hash(code),
        household_id,
        user_id,
        ttl,
    )
    return f"{code[:5]}-{code[5:]}"


async def redeem_invite(conn: Connection, code: str, channel: str, external_id: str) -> Principal | None:
    """Link the sender to the code's member and make this channel the preferred one. `None` when the code is
    unknown, spent or expired, or the sender is already linked (nothing is changed then)."""
    row = await conn.fetchrow(
        "SELECT user_id, household_id FROM faa_redeem_invite($1, $2, $3)", _code_hash(code), channel, external_id
    )
    return None if row is None else Principal(int(row["user_id"]), int(row["household_id"]))


async def linked_channels(conn: Connection, household_id: int) -> dict[int, list[str]]:
    """The chat channels each member of the household is linked on (the web API's own identity left out)."""
    rows = await conn.fetch(
        """SELECT user_id, array_agg(DISTINCT channel ORDER BY channel) AS channels FROM user_identities
           WHERE household_id = $1 AND channel <> 'web' GROUP BY user_id""",
        household_id,
    )
    return {int(row["user_id"]): list(row["channels"]) for row in rows}
