"""The web app as a family uses it every day, over HTTP (fast, no browser): compact chat history with timestamps
and plain-language steps, the installable app's files, the calendar on the member's clock, lists as typed, the
month's expenses and honest empty states, and the labels a screen reader needs."""

from __future__ import annotations

import json
import re
from html import unescape

from tests.bot.web.pages.test_calendar import session
from tests.system import System, accept_unqueued, make_family
from tools.storage import outbox


async def test_the_chat_history_is_compact_with_timestamps_and_plain_language_steps(system: System) -> None:
    family = await make_family(system.admin, "Daily chat", {"Anna": "Europe/Berlin"})
    row = await accept_unqueued(system.deps, family, "Anna", "daily-1", "  spent 12 at the bakery\n")
    async with system.deps.db.household(family.household_id) as conn:
        await outbox.add(
            conn,
            household_id=family.household_id,
            user_id=family.user_ids["Anna"],
            channel="web",
            recipient="web",
            text="\n  Saved: 12.00 EUR, groceries.\n",
            inbox_id=row.id,
            payload={"outcome": "clarifying", "options": ["Yes", "No"]},
        )
    page = await (await system.client.get("/", headers=await session(system, family, "Anna"))).text()

    # No template whitespace inside a bubble's text: a one-line reply is one line.
    assert '<div class="text">spent 12 at the bakery</div>' in page
    assert '<div class="text">Saved: 12.00 EUR, groceries.</div>' in page
    assert re.search(r'<time class="when" datetime="[^"]+">\d\d:\d\d</time>', page)
    assert re.findall(r'<button type="submit" class="option">(\w+)</button>', page) == ["Yes", "No"]
    steps = json.loads(unescape(re.search(r'data-steps="([^"]+)"', page)[1]))  # type: ignore[index]
    assert steps["store_expense"] == "Saving your expense…" and steps["render_chart"] == "Drawing the chart…"
    assert '<label for="message" class="visually-hidden">Message to FAA</label>' in page
    assert "<h1" in page


async def test_the_app_is_installable_with_a_favicon_manifest_and_an_offline_shell(system: System) -> None:
    client = system.client
    favicon = await client.get("/favicon.ico")
    assert favicon.status == 200 and favicon.content_type == "image/x-icon"
    manifest = await client.get("/manifest.webmanifest")
    assert manifest.status == 200 and manifest.content_type == "application/manifest+json"
    described = json.loads(await manifest.text())
    assert described["display"] == "standalone" and described["start_url"] == "/"
    for icon in described["icons"]:
        image = await client.get(icon["src"])
        assert image.status == 200 and (await image.read()).startswith(b"\x89PNG")
    worker = await client.get("/sw.js")
    assert worker.status == 200 and worker.content_type == "text/javascript"
    assert "/offline" in await worker.text()
    offline = await client.get("/offline", headers={"Accept-Language": "zh-CN"})
    assert offline.status == 200 and "你已离线" in await offline.text()
    login = await (await client.get("/login")).text()
    for link in ('rel="icon" href="/favicon.ico"', 'rel="manifest"', 'src="/static/app.js"', 'class="skip"'):
        assert link in login
    css = await (await client.get("/static/app.css")).text()
    assert "prefers-color-scheme: dark" in css
