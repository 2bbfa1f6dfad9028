"""Where a member is reachable: channel identities (one person, several channels) and the preferred one."""

from __future__ import annotations

from dataclasses import dataclass

from tools.database import Connection


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
