"""Where replies and reminders go: the member's preferred channel identity."""

from __future__ import annotations

import asyncpg

from tests.tools import make_family
from tools.storage.database import Database
from tools.storage.identities import Address, delivery_address


async def test_a_new_member_is_reached_through_the_web_api(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna")
    async with db.household(family.household_id) as conn:
        assert await delivery_address(conn, family.id("Anna")) == Address("web", str(family.id("Anna")))


async def test_a_linked_channel_marked_preferred_wins(db: Database, admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna")
    anna = family.id("Anna")
    await admin_conn.execute(
        "INSERT INTO user_identities (household_id, user_id, channel, external_id) "
        "VALUES ($1, $2, 'web', $3), ($1, $2, 'telegram', '42')",
        family.household_id,
        anna,
        str(anna),
    )
    async with db.household(family.household_id) as conn:
        assert await delivery_address(conn, anna) == Address("telegram", "42")  # linked beats the web feed
    await admin_conn.execute("UPDATE user_identities SET preferred = (channel = 'web') WHERE user_id = $1", anna)
    async with db.household(family.household_id) as conn:
        assert await delivery_address(conn, anna) == Address("web", str(anna))


async def test_another_households_member_has_no_address_here(db: Database, admin_conn: asyncpg.Connection) -> None:
    ours, theirs = await make_family(admin_conn, "Anna"), await make_family(admin_conn, "Zoe")
    await admin_conn.execute(
        "INSERT INTO user_identities (household_id, user_id, channel, external_id, preferred) "
        "VALUES ($1, $2, 'telegram', '77', true)",
        theirs.household_id,
        theirs.id("Zoe"),
    )
    async with db.household(ours.household_id) as conn:
        # RLS hides Zoe's identities: the fallback is a web address nobody in this household can read.
        assert (await delivery_address(conn, theirs.id("Zoe"))).channel == "web"
