"""Signed calendar feed URLs: `/ics/<token>.ics`, where the token names a household (and a member, for a member's
feed) and carries an HMAC-SHA256 of them under the household's `calendar_secret`. A phone calendar has only the
URL, so the token is checked before any household is known, through the narrow `faa_calendar_secret` door;
rotating the secret revokes every URL given out before."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from tools.storage.database import Connection

_TOKEN = re.compile(r"^(\d{1,18})-(\d{1,18})-([A-Za-z0-9_-]{43})$")


@dataclass(frozen=True)
class Feed:
    household_id: int
    member_id: int | None  # None: the whole household's feed


def _signature(secret: bytes, household_id: int, member_id: int | None) -> str:
    message = f"faa-calendar-feed:{household_id}:{member_id or 0}".encode()
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


async def token(conn: Connection, household_id: int, member_id: int | None) -> str:
    """The feed token of a household (member_id None) or of one of its members."""
    secret = await _secret(conn, household_id)
    return f"{household_id}-{member_id or 0}-{_signature(secret, household_id, member_id)}"


async def verify(conn: Connection, given: str) -> Feed | None:
    """The feed a token stands for, or None when it is malformed, forged or signed with a rotated secret."""
    match = _TOKEN.match(given)
    if match is None:
        return None
    household_id, member = int(match.group(1)), int(match.group(2))
    member_id = member or None
    secret: bytes | None = await conn.fetchval("SELECT faa_calendar_secret($1)", household_id)
    if secret is None:
        return None
    expected = _signature(secret, household_id, member_id)
    if not hmac.compare_digest(expected.encode(), match.group(3).encode()):
        return None
    return Feed(household_id, member_id)


async def rotate(conn: Connection, household_id: int) -> None:
    """A new secret for the household: every feed URL given out so far stops working."""
    await conn.execute(
        "UPDATE households SET calendar_secret = $2 WHERE id = $1", household_id, secrets.token_bytes(32)
    )


async def _secret(conn: Connection, household_id: int) -> bytes:
    secret: bytes = await conn.fetchval("SELECT calendar_secret FROM households WHERE id = $1", household_id)
    return secret
