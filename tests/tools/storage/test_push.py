"""Push subscriptions in storage: a subscription its push service replaced stays with the member who turned push on
in that browser, whoever of the household is signed in there now, and never reaches into another household."""

from __future__ import annotations

import asyncpg

from tests.tools import Family, make_family
from tools.storage import push
from tools.storage.database import Database


async def rows(admin: asyncpg.Connection, family: Family) -> list[tuple[int, int, str, str, str]]:
    """(id, member, endpoint, p256dh, auth) of the household's subscriptions, read as the owner (past RLS)."""
    found = await admin.fetch(
        "SELECT id, user_id, endpoint, p256dh, auth FROM push_subscriptions WHERE household_id = $1 ORDER BY id",
        family.household_id,
    )
    return [tuple(row) for row in found]


async def turn_on(db: Database, family: Family, member: str, endpoint: str, keys: str = "old") -> int:
    async with db.household(family.household_id, family.id(member)) as conn:
        return await push.subscribe(
            conn, family.household_id, family.id(member), endpoint, f"{keys}-p256dh", f"{keys}-auth"
        )


async def test_a_replaced_subscription_stays_with_the_member_who_turned_push_on(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    family = await make_family(admin_conn, "Anna", "Ben")
    shared = await turn_on(db, family, "Anna", "https://push.example/shared-old")
    bens = await turn_on(db, family, "Ben", "https://push.example/bens")

    # Ben is signed in to the browser Anna turned push on in when its push service replaces the subscription.
    async with db.household(family.household_id, family.id("Ben")) as conn:
        owner = await push.replace(
            conn, family.household_id, "https://push.example/shared-old", "https://push.example/shared-new", "p", "a"
        )
    assert owner == family.id("Anna")
    assert await rows(admin_conn, family) == [
        (shared, family.id("Anna"), "https://push.example/shared-new", "p", "a"),  # the same row: queued pushes follow
        (bens, family.id("Ben"), "https://push.example/bens", "old-p256dh", "old-auth"),
    ]

    # The same endpoint with new keys: the keys change, the member does not.
    async with db.household(family.household_id, family.id("Ben")) as conn:
        owner = await push.replace(
            conn, family.household_id, "https://push.example/shared-new", "https://push.example/shared-new", "k", "s"
        )
    assert owner == family.id("Anna")
    assert (await rows(admin_conn, family))[0] == (
        shared,
        family.id("Anna"),
        "https://push.example/shared-new",
        "k",
        "s",
    )


async def test_a_subscription_the_household_did_not_know_turns_nothing_on(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    family = await make_family(admin_conn, "Anna", "Ben")
    await turn_on(db, family, "Anna", "https://push.example/annas")
    before = await rows(admin_conn, family)
    async with db.household(family.household_id, family.id("Ben")) as conn:
        owner = await push.replace(
            conn, family.household_id, "https://push.example/unknown", "https://push.example/next", "p", "a"
        )
    assert owner is None
    assert await rows(admin_conn, family) == before


async def test_a_new_endpoint_turned_on_meanwhile_stands_and_the_replaced_one_goes(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    family = await make_family(admin_conn, "Anna", "Ben")
    await turn_on(db, family, "Anna", "https://push.example/old")
    bens = await turn_on(db, family, "Ben", "https://push.example/new")  # Ben turned it on before the worker posted
    async with db.household(family.household_id, family.id("Anna")) as conn:
        owner = await push.replace(
            conn, family.household_id, "https://push.example/old", "https://push.example/new", "p", "a"
        )
    assert owner == family.id("Ben")
    assert await rows(admin_conn, family) == [(bens, family.id("Ben"), "https://push.example/new", "p", "a")]


async def test_another_households_subscription_of_the_same_browser_is_never_touched(
    db: Database, admin_conn: asyncpg.Connection
) -> None:
    """One browser, members of two households: each household's row is its own, under row-level security."""
    ours, theirs = await make_family(admin_conn, "Anna"), await make_family(admin_conn, "Cleo")
    await turn_on(db, ours, "Anna", "https://push.example/browser")
    await turn_on(db, theirs, "Cleo", "https://push.example/browser")
    await turn_on(db, theirs, "Cleo", "https://push.example/cleos-new", keys="cleos")
    untouched = await rows(admin_conn, theirs)

    async with db.household(ours.household_id, ours.id("Anna")) as conn:
        # Even a bug handing over the other household's id finds nothing there: RLS shows only ours.
        assert (
            await push.replace(
                conn, theirs.household_id, "https://push.example/browser", "https://push.example/next", "p", "a"
            )
            is None
        )
        # A new endpoint the other household knows is unknown here: it neither stands nor has its keys changed.
        owner = await push.replace(
            conn, ours.household_id, "https://push.example/browser", "https://push.example/cleos-new", "p", "a"
        )
    assert owner == ours.id("Anna")
    assert [row[1:] for row in await rows(admin_conn, ours)] == [
        (ours.id("Anna"), "https://push.example/cleos-new", "p", "a")
    ]
    assert await rows(admin_conn, theirs) == untouched
