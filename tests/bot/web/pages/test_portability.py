"""The data page over HTTP: a member downloads their own data, an adult the household's (a child may not), and
"forget everything about me" needs the typed confirmation, then signs the member out for good."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from tests.bot.web.pages.test_calendar import feed_paths, session
from tests.privacy_matrix import call, family_of_three
from tests.system import System, make_family
from tools.storage import households, memories


async def _note(system: System, household_id: int, author: int, text: str, visibility: str) -> None:
    async with system.deps.db.household(household_id, author) as conn:
        await memories.insert(
            conn,
            household_id=household_id,
            author_id=author,
            content=text,
            understanding={"kind": "expense", "category": "groceries"},
            embedding=[0.1] * 64,
            amount=Decimal("4.50"),
            currency="EUR",
            occurred_at=datetime(2031, 3, 10, tzinfo=UTC),
            visibility=visibility,
            source_inbox_id=None,
        )


async def test_downloads_hold_what_each_may_see(system: System) -> None:
    family = await make_family(system.admin, "Portable", {"Anna": "Europe/Berlin", "Kid": "Europe/Berlin"})
    await system.admin.execute("UPDATE users SET role = 'child' WHERE id = $1", family.user_ids["Kid"])
    await _note(system, family.household_id, family.user_ids["Anna"], "Anna's private bakery", "private")
    await _note(system, family.household_id, family.user_ids["Kid"], "Kid's ice cream", "household")
    anna, kid = await session(system, family, "Anna"), await session(system, family, "Kid")

    response = await system.client.get("/data/household.zip", headers=anna)
    assert response.status == 200 and response.content_type == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(await response.read()))
    assert sorted(archive.namelist()) == ["events.ics", "expenses.csv", "memories.json", "reminders.ics"]
    contents = [m["content"] for m in json.loads(archive.read("memories.json"))["memories"]]
    assert contents == ["Anna's private bakery", "Kid's ice cream"]  # Anna's own private one, and the household's

    assert (await system.client.get("/data/household.zip", headers=kid)).status == 403
    mine = zipfile.ZipFile(io.BytesIO(await (await system.client.get("/data/mine.zip", headers=kid)).read()))
    assert [m["content"] for m in json.loads(mine.read("memories.json"))["memories"]] == ["Kid's ice cream"]


async def test_forgetting_needs_the_typed_confirmation(system: System) -> None:
    family = await make_family(system.admin, "Forgetful web", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    await _note(system, family.household_id, family.user_ids["Anna"], "Anna's private bakery", "private")
    await _note(system, family.household_id, family.user_ids["Anna"], "Bread for everyone", "household")
    anna = await session(system, family, "Anna")
    feed = feed_paths(await (await system.client.get("/calendar", headers=anna)).text())["mine"]
    assert (await system.client.get(feed)).status == 200

    refused = await system.client.post("/data/forget", data={"confirm": "yes"}, headers=anna)
    assert refused.status == 400 and "Type FORGET to confirm." in await refused.text()
    assert await system.admin.fetchval("SELECT forgotten_at FROM users WHERE id = $1", family.user_ids["Anna"]) is None

    done = await system.client.post("/data/forget", data={"confirm": "forget "}, headers=anna)
    assert done.status == 200 and "Everything about you was forgotten." in await done.text()
    rows = await system.admin.fetch(
        "SELECT content, author_id FROM memories WHERE household_id = $1", family.household_id
    )
    assert [(r["content"], r["author_id"]) for r in rows] == [("Bread for everyone", None)]
    page = await system.client.get("/data", headers=anna, allow_redirects=False)
    assert page.status == 303  # the session is gone
    assert (await system.client.get(feed)).status == 404  # and so is their calendar feed
    async with system.deps.db.household(family.household_id) as conn:
        assert [m.name for m in await households.members(conn, family.household_id)] == ["Tom"]


async def test_exports_and_feeds_hold_private_rows_of_every_kind_for_their_author_alone(system: System) -> None:
    """Alex keeps a memory, an event and a reminder to herself and a party from Sam: Sam's downloads (the household's
    and his own) and feeds hold none of them, Mia's hold the party and nothing private, Alex's own hold all."""
    family = await family_of_three(system.admin, "Portable private")
    soon = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=0).isoformat()
    private = {"visibility": "private"}
    await call(system, family, "Alex", "store", {"content": "Alex's diary", "kind": "note", **private})
    await call(system, family, "Alex", "add_event", {"title": "Alex's therapy", "start": soon, **private})
    await call(system, family, "Alex", "schedule_reminder", {"text": "Alex's pills", "when": soon, **private})
    await call(system, family, "Alex", "add_event", {"title": "Sam's party", "start": soon, "whose": "household",
                                                     "hidden_from": "Sam"})  # fmt: skip
    await call(system, family, "Sam", "store", {"content": "Bins on Tuesday", "kind": "note"})
    secrets = ("Alex's diary", "Alex's therapy", "Alex's pills")

    async def downloaded(member: str, path: str) -> str:
        response = await system.client.get(path, headers=await session(system, family, member))
        assert response.status == 200, (member, path)
        archive = zipfile.ZipFile(io.BytesIO(await response.read()))
        return "\n".join(archive.read(name).decode() for name in archive.namelist())

    async def feeds(member: str) -> dict[str, str]:
        page = await (await system.client.get("/calendar", headers=await session(system, family, member))).text()
        return {which: await (await system.client.get(path)).text() for which, path in feed_paths(page).items()}

    for member, path in (("Sam", "/data/household.zip"), ("Sam", "/data/mine.zip"), ("Mia", "/data/mine.zip")):
        held = await downloaded(member, path)
        assert not any(secret in held for secret in secrets), (member, path)
        assert member != "Sam" or "Sam's party" not in held, path
    alex = await downloaded("Alex", "/data/mine.zip")
    assert all(secret in alex for secret in secrets)
    for member in ("Sam", "Mia"):
        for which, body in (await feeds(member)).items():
            assert not any(secret in body for secret in secrets), (member, which)
            assert ("Sam's party" in body) == (member == "Mia" and which == "mine"), (member, which)
    alex_feeds = await feeds("Alex")
    assert "Alex's therapy" in alex_feeds["mine"] and "Sam's party" in alex_feeds["mine"]
    assert "Alex's therapy" not in alex_feeds["household"] and "Sam's party" not in alex_feeds["household"]
