"""Signed media links: a link opens one household's image until it expires; forged, expired or misdirected links
open nothing. A chart the model draws reaches the web API's reply as such a link."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from bot.web.media import media_link
from engine.settings import MediaSettings, Settings
from tests.e2e.scripts import routed_model
from tests.fakes.openai_server import FakeOpenAI
from tests.system import System, make_family, running_system
from tests.tools.test_charts import PNG_MAGIC, png_size
from tools.storage import households, media, outbox

SECRET = "test-media-secret-0123456789abcdefghij"


@pytest.fixture
async def linked(settings: Settings, fake_llm: FakeOpenAI, admin_conn) -> AsyncIterator[System]:
    with_links = settings.model_copy(update={"media": MediaSettings(secret=SECRET, link_ttl_s=600)})
    async with running_system(with_links, fake_llm, admin_conn) as system:
        yield system


async def stored_image(system: System, name: str) -> tuple[int, int]:
    family = await make_family(system.admin, name, {"Anna": "Europe/Berlin"})
    async with system.deps.db.household(family.household_id) as conn:
        media_id = await media.save(
            conn, family.household_id, kind="chart", mime="image/png", data=PNG_MAGIC + name.encode()
        )
    return media_id, family.household_id


def tampered(link: str, **changes: str) -> str:
    parts = urlsplit(link)
    query = {key: values[0] for key, values in parse_qs(parts.query).items()}
    return f"{parts.path}?{urlencode({**query, **changes})}"


async def test_a_signed_link_opens_the_image_until_it_expires(linked: System) -> None:
    media_id, household_id = await stored_image(linked, "Linked")
    link = media_link(linked.deps.settings.media, media_id, household_id)
    assert link is not None and link.startswith(f"/media/{media_id}?")

    response = await linked.client.get(link)
    assert response.status == 200 and await response.read() == PNG_MAGIC + b"Linked"
    assert response.headers["Content-Type"] == "image/png"
    assert response.headers["X-Content-Type-Options"] == "nosniff"

    expired = media_link(linked.deps.settings.media, media_id, household_id, now=time.time() - 601)
    assert expired is not None
    response = await linked.client.get(expired)
    assert response.status == 403 and (await response.json())["error"]["code"] == "link_expired"


async def test_forged_links_open_nothing(linked: System) -> None:
    media_id, household_id = await stored_image(linked, "Forged")
    _, other_household = await stored_image(linked, "Other")
    link = media_link(linked.deps.settings.media, media_id, household_id)
    assert link is not None
    signature = parse_qs(urlsplit(link).query)["s"][0]
    later = str(int(time.time()) + 10**6)
    forgeries = [
        tampered(link, s=signature[:-1] + ("A" if signature[-1] != "A" else "B")),
        tampered(link, h=str(other_household)),
        tampered(link, e=later),
        tampered(link, s=""),
        f"/media/{media_id}",
        f"/media/{media_id}?h={household_id}&e={later}&s=x",
        tampered(link, h="one"),
    ]
    for forged in forgeries:
        response = await linked.client.get(forged)
        assert response.status == 403, forged
        assert (await response.json())["error"]["code"] == "invalid_link"
    # The same signature on another image of the same household opens nothing either.
    response = await linked.client.get(tampered(link).replace(f"/media/{media_id}?", f"/media/{media_id + 1}?"))
    assert response.status == 403
    for path in ("/media/abc", "/media/99999999999999999999"):
        assert (await linked.client.get(path)).status == 404


async def test_a_link_never_reveals_another_households_image(linked: System) -> None:
    theirs, their_household = await stored_image(linked, "Theirs")
    _, our_household = await stored_image(linked, "Ours")
    # Even a correctly signed link (a bug that signs the wrong household) is read inside that household's RLS.
    misdirected = media_link(linked.deps.settings.media, theirs, our_household)
    assert misdirected is not None
    response = await linked.client.get(misdirected)
    assert response.status == 404
    assert (
        await linked.client.get(media_link(linked.deps.settings.media, theirs, their_household) or "")
    ).status == 200


async def test_without_a_secret_there_are_no_links(system: System) -> None:
    media_id, household_id = await stored_image(system, "Unlinked")
    assert media_link(system.deps.settings.media, media_id, household_id) is None
    signed_elsewhere = media_link(MediaSettings(secret=SECRET), media_id, household_id)
    assert signed_elsewhere is not None
    assert (await system.client.get(signed_elsewhere)).status == 404


async def test_a_chart_asked_for_comes_with_the_reply(linked: System) -> None:
    family = await make_family(linked.admin, "Charted", {"Anna": "Europe/Berlin"})
    linked.llm.script(routed_model())
    for spent in ("I spent 47.75 euros on groceries", "I paid 800 euros rent"):
        sent = await linked.client.post("/v1/messages", json={"text": spent}, headers=family.auth("Anna"))
        assert (await sent.json())["outcome"] == "answered"

    asked = {"text": "show me a chart of our spending"}
    response = await linked.client.post("/v1/messages", json=asked, headers=family.auth("Anna"))

    body = await response.json()
    assert response.status == 200 and "847.75 EUR" in body["reply"]
    [item] = body["media"]
    image = await linked.client.get(item["url"])
    assert image.status == 200 and png_size(await image.read()) == (800, 500)
    payload = await linked.admin.fetchval("SELECT payload FROM outbox WHERE inbox_id = $1", body["message_id"])
    assert f'"media_ids": [{item["id"]}]' in payload
    owner = await linked.admin.fetchval("SELECT household_id FROM media WHERE id = $1", item["id"])
    assert owner == family.household_id


async def test_a_digest_chart_for_a_web_member_is_linked_from_the_notification_feed(linked: System) -> None:
    media_id, household_id = await stored_image(linked, "FeedChart")
    _, token = await households.add_member(linked.admin, household_id, "Ben", timezone="Europe/Berlin")
    ben = await linked.admin.fetchval("SELECT id FROM users WHERE household_id = $1 AND name = 'Ben'", household_id)
    async with linked.deps.db.household(household_id) as conn:
        row_id = await outbox.add(
            conn,
            household_id=household_id,
            user_id=ben,
            channel="web",
            recipient=str(ben),
            text="February: 412.30 EUR in 9 categories.",
            payload={"kind": "digest", "media_ids": [media_id]},
        )
        assert row_id is not None
        await outbox.mark_sent(conn, row_id)

    feed = await linked.client.get("/v1/notifications", headers={"Authorization": f"Bearer {token}"})
    [entry] = (await feed.json())["notifications"]
    assert entry["kind"] == "digest" and entry["text"].startswith("February")
    [image] = entry["media"]
    assert image["id"] == media_id
    picture = await linked.client.get(image["url"])
    assert picture.status == 200 and (await picture.read()).startswith(PNG_MAGIC)


async def test_a_validly_signed_link_to_an_unknown_household_or_image_is_not_found(linked: System) -> None:
    """Ids no row can have (beyond PostgreSQL's bigint, zero, negative) are a 404 like any unknown id, not a 500."""
    media_id, _ = await stored_image(linked, "Unknown")
    for household_id in (2**63, 2**80, 0, -1, 2**31):
        link = media_link(linked.deps.settings.media, media_id, household_id)
        assert link is not None
        response = await linked.client.get(link)
        assert response.status == 404, household_id
