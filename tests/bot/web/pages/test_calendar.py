"""The calendar page over HTTP: events added and listed, .ics upload (twice changes nothing), and the signed feed
URLs a phone subscribes to — parsed by the `icalendar` package, scoped to a member, revoked by rotating the secret."""

from __future__ import annotations

import re
from datetime import datetime

import icalendar
from aiohttp import FormData

from bot.web.pages.security import csrf_for_session
from tests.system import Family, System, make_family
from tests.tools.test_events import GARBAGE_START
from tools.storage import web_sessions
from tools.storage.identities import create_invite


async def session(system: System, family: Family, member: str) -> dict[str, str]:
    """Headers of a signed-in browser of `member`: the session cookie and the CSRF token for its forms."""
    principal = family.principal(member)
    async with system.deps.db.household(principal.household_id) as conn:
        code = await create_invite(conn, principal.household_id, principal.user_id)
    async with system.deps.db.unscoped() as conn:
        opened = await web_sessions.open_session(conn, code)
    assert opened is not None
    return {"Cookie": f"faa_session={opened[1]}", "X-CSRF-Token": csrf_for_session(opened[1])}


def feed_paths(page: str) -> dict[str, str]:
    found = dict(re.findall(r'class="feed (household|mine)" value="https?://[^/]+(/ics/[^"]+\.ics)"', page))
    assert set(found) == {"household", "mine"}
    return found


def summaries(body: bytes) -> set[str]:
    return {str(event.get("summary")) for event in icalendar.Calendar.from_ical(body).walk("VEVENT")}


async def test_events_reach_the_feeds_and_rotating_the_secret_revokes_them(system: System) -> None:
    family = await make_family(system.admin, "Calendar", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    anna, tom = await session(system, family, "Anna"), await session(system, family, "Tom")
    client = system.client
    for title, whose in (("Dentist", "self"), ("Ski trip", "household")):
        response = await client.post(
            "/calendar",
            data={"title": title, "start": "2031-03-13T15:00", "whose": whose},
            headers=anna,
            allow_redirects=False,
        )
        assert response.status == 303
    refused = await client.post("/calendar", data={"title": "", "start": "soon"}, headers=anna)
    assert refused.status == 400

    page = await (await client.get("/calendar", headers=anna)).text()
    paths = feed_paths(page)
    toms = feed_paths(await (await client.get("/calendar", headers=tom)).text())
    household = await client.get(paths["household"])
    assert household.status == 200 and household.content_type == "text/calendar"
    assert summaries(await household.read()) == {"Dentist", "Ski trip"}
    assert summaries(await (await client.get(paths["mine"])).read()) == {"Dentist", "Ski trip"}
    assert summaries(await (await client.get(toms["mine"])).read()) == {"Ski trip"}

    forged = re.sub(r"-[A-Za-z0-9_-]{43}\.ics$", "-" + "A" * 43 + ".ics", paths["household"])
    other_household = re.sub(r"^/ics/\d+-", "/ics/999999-", paths["household"])
    for path in (forged, other_household, "/ics/nonsense.ics"):
        assert (await client.get(path)).status == 404

    assert (await client.post("/calendar/rotate", headers=anna, allow_redirects=False)).status == 303
    assert (await client.get(paths["household"])).status == 404
    fresh = feed_paths(await (await client.get("/calendar", headers=anna)).text())
    assert fresh["household"] != paths["household"]
    assert (await client.get(fresh["household"])).status == 200


async def test_an_uploaded_file_is_imported_once(system: System) -> None:
    family = await make_family(system.admin, "Importers", {"Anna": "Europe/Berlin"})
    anna = await session(system, family, "Anna")
    cal = icalendar.Calendar()
    cal.add("prodid", "-//school//EN")
    cal.add("version", "2.0")
    event = icalendar.Event()
    event.add("uid", "sports-day@school.example")
    event.add("summary", "Sports day")
    event.add("dtstart", datetime(2031, 6, 20).date())
    event.add("dtstamp", datetime(2031, 1, 1))
    cal.add_component(event)

    notes = []
    for _ in range(2):
        form = FormData()
        form.add_field("whose", "household")
        form.add_field("file", cal.to_ical(), filename="school.ics", content_type="text/calendar")
        response = await system.client.post("/calendar/import", data=form, headers=anna)
        assert response.status == 200
        notes.append(re.search(r'id="import-note">([^<]+)<', await response.text()).group(1))  # type: ignore[union-attr]
    assert notes == [
        "Imported: 1 new, 0 updated, 0 unchanged.",
        "Imported: 0 new, 0 updated, 1 unchanged.",
    ]
    count = await system.admin.fetchval("SELECT count(*) FROM events WHERE household_id = $1", family.household_id)
    assert count == 1

    form = FormData()
    form.add_field("file", b"not a calendar", filename="x.ics", content_type="text/calendar")
    response = await system.client.post("/calendar/import", data=form, headers=anna)
    assert response.status == 400 and "not an iCalendar file" in await response.text()

    form = FormData()
    form.add_field("file", GARBAGE_START, filename="broken.ics", content_type="text/calendar")
    response = await system.client.post("/calendar/import", data=form, headers=anna)
    assert response.status == 400 and "cannot be read" in await response.text()
