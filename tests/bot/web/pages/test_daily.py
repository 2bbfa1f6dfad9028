"""The web app as a family uses it every day, over HTTP (fast, no browser): compact chat history with timestamps
and plain-language steps, the installable app's files, the calendar on the member's clock, lists as typed, the
month's expenses and honest empty states, and the labels a screen reader needs."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from html import unescape
from html.parser import HTMLParser

from aiohttp import FormData
from playwright.async_api import BrowserContext, expect

from tests.bot.web.pages.conftest import base_url, signed_in
from tests.bot.web.pages.test_calendar import session
from tests.bot.web.pages.test_pages import _expense
from tests.system import System, accept_unqueued, make_family
from tools.storage import memories, outbox


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
    # The message and its reply each say when, on the member's clock.
    assert len(re.findall(r'<time class="when" datetime="[^"]+">\d\d:\d\d</time>', page)) == 2
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
    css = await client.get("/static/app.css")
    assert css.content_type == "text/css" and "prefers-color-scheme: dark" in await css.text()
    again = await client.get("/static/app.css", headers={"If-None-Match": css.headers["ETag"]})
    assert again.status == 304 and not await again.read()
    for missing in ("/static/nothing.js", "/static/..%2Froutes.py", "/static/%2E%2E/render.py"):
        assert (await client.get(missing)).status == 404, missing


CONCERT = (
    b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//School//EN\r\nBEGIN:VEVENT\r\nUID:concert-1@school\r\n"
    b"DTSTAMP:20261101T000000Z\r\nDTSTART:20311203T170000Z\r\nDTEND:20311203T190000Z\r\nSUMMARY:School concert\r\n"
    b"END:VEVENT\r\nEND:VCALENDAR\r\n"
)


async def test_the_calendar_is_on_the_members_clock_in_week_and_month_views_with_confirmations(
    system: System,
) -> None:
    family = await make_family(system.admin, "Daily calendar", {"Anna": "Europe/Berlin"})
    anna = await session(system, family, "Anna")
    form = FormData()
    form.add_field("csrf", anna["X-CSRF-Token"])
    form.add_field("file", CONCERT, filename="school.ics", content_type="text/calendar")
    imported = await system.client.post("/calendar/import", data=form, headers=anna)
    assert imported.status == 200

    def concert(page: str) -> str:
        found = re.search(r'data-day="([\d-]+)">([^<]+)</span>\s*<strong class="title">School', page)
        assert found, page
        return f"{found[1]} {found[2]}"

    for view in ("list", "week", "month"):
        page = await (await system.client.get(f"/calendar?view={view}&at=2031-12-01", headers=anna)).text()
        assert concert(page) == "2031-12-03 18:00–20:00"  # 17:00 UTC is 18:00 in Berlin
        assert 'aria-current="page">' + {"list": "Coming up", "week": "Week", "month": "Month"}[view] in page
    assert "December 2031" in page and '<th scope="col">Mon</th>' in page
    week = await (await system.client.get("/calendar?view=week&at=2031-12-03", headers=anna)).text()
    assert "Week of Monday 1 December" in week and week.count("Nothing planned") == 6
    assert re.search(r'data-confirm="Cancel “School concert”\?', week)
    assert 'id="rotate" data-confirm="Revoke all calendar addresses?' in week
    assert '<label>Calendar file (.ics) <input type="file"' in week
    odd = await system.client.get("/calendar?view=year&at=tomorrow", headers=anna)
    assert odd.status == 200  # an unknown view or day shows the coming weeks


async def test_lists_keep_their_names_strike_ticked_items_and_the_json_is_the_pages_data(system: System) -> None:
    family = await make_family(system.admin, "Daily lists", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    anna = await session(system, family, "Anna")
    client = system.client
    for text, name in (("a bike", "wishlist"), ("milk", "shopping list")):
        form = {"csrf": anna["X-CSRF-Token"], "text": text, "list_name": name, "quantity": "", "assignee": ""}
        added = await client.post("/lists/items", data=form, headers=anna, allow_redirects=False)
        assert added.status == 303
    listed = await (await client.get("/app/lists", headers=anna)).json()
    assert sorted(list_["list_name"] for list_ in listed["lists"]) == ["shopping", "wishlist"]
    milk = next(i for list_ in listed["lists"] for i in list_["items"] if i["text"] == "milk")["item_id"]
    ticked = await client.post(
        f"/lists/items/{milk}/tick", data={"csrf": anna["X-CSRF-Token"], "done": "1"}, headers=anna
    )
    assert ticked.status == 200  # after the redirect: the page again
    edited = await client.post(
        f"/lists/items/{milk}/edit",
        data={"csrf": anna["X-CSRF-Token"], "quantity": "2 l", "assignee": "Tom"},
        headers=anna,
    )
    page = await edited.text()
    assert edited.status == 200
    assert re.search(r'<span class="qty">2 l</span> <s>milk</s>', page)
    assert '<span class="badge who">Tom</span>' in page
    assert 'aria-label="Open milk again"' in page and 'aria-label="Tick off a bike"' in page
    page_items = sorted(re.findall(r'<li data-item="(\d+)"', page))
    listed = await (await client.get("/app/lists", headers=anna)).json()  # ticked items too, as on the page
    assert sorted(str(i["item_id"]) for list_ in listed["lists"] for i in list_["items"]) == page_items
    open_only = await (await client.get("/app/lists?include_done=0", headers=anna)).json()
    assert [i["text"] for list_ in open_only["lists"] for i in list_["items"]] == ["a bike"]
    refused = await client.post(
        f"/lists/items/{milk}/edit", data={"csrf": anna["X-CSRF-Token"], "assignee": "Grandma"}, headers=anna
    )
    assert refused.status == 400 and "Grandma" in await refused.text()


async def test_money_lists_the_months_expenses_to_correct_and_memories_search_says_when_nothing_matches(
    system: System,
) -> None:
    family = await make_family(system.admin, "Daily money", {"Anna": "Europe/Berlin"})
    anna = await session(system, family, "Anna")
    at = "2031-03-14T10:00:00+00:00"
    bakery = await _expense(system, family, "Anna", "Paid 12.30 EUR at the bakery", "12.30", "EUR", at=at)
    await _expense(system, family, "Anna", "Fuel", "54.10", "EUR", category="transport", at=at)
    page = await (await system.client.get("/money?month=2031-03", headers=anna)).text()
    assert "<h1>Money</h1>" in page and '<h2 id="month-title">March 2031</h2>' in page
    assert "‹ February</a>" in page and "April ›</a>" in page
    assert sorted(re.findall(r'<span class="what">([^<]+)</span>', page)) == ["Fuel", "Paid 12.30 EUR at the bakery"]
    assert "<th></th>" not in page and 'colspan="5">No budgets yet.' in page
    corrected = await system.client.post(
        f"/memories/{bakery}/edit",
        data={
            "csrf": anna["X-CSRF-Token"],
            "back": f"/money?month=2031-03#expense-{bakery}",
            "content": "Paid 12.30 EUR at the bakery",
            "category": "bakery",
            "amount": "13.30",
            "currency": "EUR",
        },
        headers=anna,
        allow_redirects=False,
    )
    assert corrected.status == 303 and corrected.headers["Location"] == f"/money?month=2031-03#expense-{bakery}"
    page = await (await system.client.get("/money?month=2031-03", headers=anna)).text()
    assert '<strong class="amount">13.30 EUR</strong>' in page
    elsewhere = await system.client.post(
        f"/memories/{bakery}/edit",
        data={"csrf": anna["X-CSRF-Token"], "back": "https://evil.example/", "content": "Paid at the bakery"},
        headers=anna,
        allow_redirects=False,
    )
    assert elsewhere.headers["Location"] == f"/memories#memory-{bakery}"

    by_category = await (await system.client.get("/memories?q=transport", headers=anna)).text()
    assert _contents(by_category, "memories") == ["Fuel"]
    nothing = await (await system.client.get("/memories?q=zebra", headers=anna)).text()
    assert "Nothing matches “zebra”" in nothing and "Tell FAA something" not in nothing

    # By meaning too: words the card does not contain, near it by the embedder, under their own heading.
    [vector] = await system.deps.embedder.embed(["Mia's check-up at Dr. Berg on Tuesday"], "passage")
    async with system.deps.db.household(family.household_id, family.user_ids["Anna"]) as conn:
        await memories.insert(
            conn, household_id=family.household_id, author_id=family.user_ids["Anna"],
            content="Mia's check-up at Dr. Berg on Tuesday", understanding={"kind": "appointment"}, embedding=vector,
            amount=None, currency=None, occurred_at=datetime.now(UTC), visibility="household", source_inbox_id=None,
        )  # fmt: skip
    meant = await (await system.client.get("/memories?q=when+is+the+Berg+appointment", headers=anna)).text()
    assert "Nothing matches “when is the Berg appointment”" in meant and _contents(meant, "memories") == []
    assert "Closest in meaning to “when is the Berg appointment”" in meant
    assert _contents(meant, "near")[0] == "Mia&#39;s check-up at Dr. Berg on Tuesday"


def _contents(page: str, list_id: str) -> list[str]:
    """The memories shown in one list of the memories page: the words' matches or those near in meaning."""
    found = re.search(rf'<ul class="list" id="{list_id}"[^>]*>(.*?)</ul>', page, re.S)
    return re.findall(r'<div class="content">([^<]+)</div>', found[1]) if found else []


class _Controls(HTMLParser):
    """The form controls of a page that no label names (by nesting, `for` or aria-label), its h1s and empty th."""

    def __init__(self) -> None:
        super().__init__()
        self.in_label = 0
        self.labelled_ids: set[str] = set()
        self.unnamed: list[dict[str, str | None]] = []
        self.h1 = 0
        self.th: list[str] = []
        self.in_th = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "label":
            self.in_label += 1
            if found.get("for"):
                self.labelled_ids.add(str(found["for"]))
        elif tag in ("input", "select", "textarea") and found.get("type") != "hidden":
            if not (self.in_label or found.get("aria-label") or found.get("aria-labelledby")):
                self.unnamed.append(found)
        elif tag == "h1":
            self.h1 += 1
        elif tag == "th":
            self.in_th = True
            self.th.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "label":
            self.in_label -= 1
        elif tag == "th":
            self.in_th = False

    def handle_data(self, data: str) -> None:
        if self.in_th:
            self.th[-1] += data.strip()


async def test_every_page_has_a_heading_a_skip_link_headed_tables_and_labelled_controls(system: System) -> None:
    family = await make_family(system.admin, "Daily a11y", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    anna = await session(system, family, "Anna")
    await _expense(system, family, "Anna", "Paid 12.30 EUR at the bakery", "12.30", "EUR")
    added = await system.client.post(
        "/app/lists/items", json={"list_name": "shopping", "items": [{"text": "milk"}]}, headers=anna
    )
    assert added.status == 200
    for path in ("/", "/memories", "/reminders", "/calendar", "/calendar?view=month", "/lists", "/money", "/data",
                 "/household"):  # fmt: skip
        page = await (await system.client.get(path, headers=anna)).text()
        controls = _Controls()
        controls.feed(page)
        unnamed = [c for c in controls.unnamed if c.get("id") not in controls.labelled_ids]
        assert unnamed == [], path
        assert controls.h1 == 1, path
        assert "" not in controls.th, path
        assert '<a class="skip" href="#main">Skip to content</a>' in page and '<main id="main"' in page, path


async def test_in_chromium_the_service_worker_shows_the_offline_page_without_a_network(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Daily offline", {"Anna": "Europe/Berlin"})
    page = await signed_in(system, new_context, family, "Anna")
    await page.goto(base_url(system) + "/lists")
    assert await page.evaluate("navigator.serviceWorker.ready.then(r => r.active.scriptURL)") == (
        base_url(system) + "/sw.js"
    )
    await page.reload()  # controlled by the worker from now on
    await page.context.set_offline(True)
    await page.goto(base_url(system) + "/money")
    await expect(page.locator("h1")).to_have_text("You are offline")
    await page.context.set_offline(False)
