"""Screenshots of every page of the web app: a demo household on throwaway PostgreSQL, the local Redis (database
14), the scripted model from tests/fakes and Debian's Chromium — each page on a phone (390×844) and a desktop
(1280×800), light and dark.

    .venv/bin/python docs/screenshots.py        # writes docs/screenshots/<page>-<phone|desktop>-<light|dark>.png

`--redis-db N` picks another database when a benchmark holds 14 (it is flushed, and a second worker on it would take
the chat's message).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import asyncpg  # noqa: E402

from bench import _harness as harness  # noqa: E402
from tests.bot.web.pages.conftest import CHROMIUM_FLAGS, chromium_path  # noqa: E402
from tests.e2e.scripts import routed_model  # noqa: E402
from tools.storage import identities, memories, reminders, web_sessions  # noqa: E402

OUT = Path(__file__).parent / "screenshots"
EXPENSES = [
    ("Groceries at Lidl", "groceries", "62.40"),
    ("Groceries at Rewe", "groceries", "38.15"),
    ("Swimming lessons for Mia", "kids", "45.00"),
    ("Electricity bill", "utilities", "88.00"),
    ("Pizza night", "eating-out", "31.50"),
    ("New school shoes", "clothes", "54.99"),
]


async def _seed(web: harness.Web, admin: asyncpg.Connection) -> tuple[str, str]:
    family = await harness.make_family(admin, "The Millers", ["Sam", "Alex", "Mia"])
    await admin.execute("UPDATE users SET role = 'owner' WHERE id = $1", family.user_ids["Sam"])
    await admin.execute("UPDATE users SET role = 'child' WHERE id = $1", family.user_ids["Mia"])
    sam, now = family.user_ids["Sam"], datetime.now(UTC)
    async with web.deps.db.household(family.household_id, sam) as conn:
        for day, (text, category, amount) in enumerate(EXPENSES):
            await memories.insert(
                conn, household_id=family.household_id, author_id=sam, content=text,
                understanding={"kind": "expense", "category": category}, embedding=[0.1] * harness.EMBEDDING_DIM,
                amount=Decimal(amount), currency="EUR", occurred_at=now - timedelta(days=day % 3),
                visibility="household", source_inbox_id=None,
            )  # fmt: skip
        await memories.insert(
            conn, household_id=family.household_id, author_id=sam, content="Mia's dentist is Dr. Berg, Tuesdays",
            understanding={"kind": "contact"}, embedding=[0.1] * harness.EMBEDDING_DIM, amount=None, currency=None,
            occurred_at=now, visibility="household", source_inbox_id=None,
        )  # fmt: skip
        for hours, text in ((20, "Take out the recycling"), (50, "Pay the swimming club")):
            at = (now + timedelta(hours=hours)).replace(minute=0, second=0, microsecond=0)
            await reminders.insert(
                conn, household_id=family.household_id, created_by=sam, recipient_ids=[sam], text=text,
                timezone="Europe/Berlin", rrule="FREQ=WEEKLY" if hours == 20 else None, first_fire_at=at,
                dtstart_local=at.replace(tzinfo=None), for_household=False, source_inbox_id=None,
            )  # fmt: skip
        code = await identities.create_invite(conn, family.household_id, sam)
    async with web.deps.db.unscoped() as conn:
        opened = await web_sessions.open_session(conn, code)
    assert opened is not None
    return opened[1], str(family.household_id)


PAGES = ["chat", "memories", "reminders", "calendar", "lists", "money", "data", "household"]
DEVICES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}


async def _seed_in_the_app(browser: Any, base_url: str, token: str) -> None:
    """What the family did in the app: a question in the chat, a shopping list, events in the calendar."""
    context = await browser.new_context(viewport=DEVICES["phone"])
    await context.add_cookies([{"name": "faa_session", "value": token, "url": base_url}])
    page = await context.new_page()
    await page.goto(base_url + "/")
    csrf = {"X-CSRF-Token": await page.locator("meta[name=csrf-token]").get_attribute("content") or ""}
    for text in ("milk", "bread", "apples", "dish soap"):
        await page.request.post(
            base_url + "/app/lists/items", data={"list_name": "shopping", "items": [{"text": text}]}, headers=csrf
        )
    today = date.today()
    for days, title in ((1, "Swimming lessons 16:00"), (3, "Parents' evening 19:00"), (8, "Dentist, Mia 09:30")):
        day, clock = today + timedelta(days=days), title.rsplit(" ", 1)[1]
        event = {"title": title.rsplit(" ", 1)[0], "start": f"{day.isoformat()}T{clock}", "whose": "household"}
        await page.request.post(base_url + "/app/events", data=event, headers=csrf)
    await page.fill("#message", "How much did we spend this month?")
    await page.click("#send")
    await page.wait_for_selector(".msg.faa[data-outcome]")
    await context.close()


async def _shoot(browser: Any, base_url: str, token: str, device: str, viewport: dict[str, int], scheme: str) -> None:
    context = await browser.new_context(viewport=viewport, color_scheme=scheme)
    await context.add_cookies([{"name": "faa_session", "value": token, "url": base_url}])
    page = await context.new_page()
    for name in PAGES:
        await page.goto(base_url + ("/" if name == "chat" else f"/{name}"))
        if name == "household":  # with an invite: its sign-in link as a QR code
            await page.locator("[data-member=Alex] .invite-button").click()
            await page.wait_for_selector("#invite svg")
            await page.wait_for_load_state()
        await page.screenshot(path=OUT / f"{name}-{device}-{scheme}.png")
        harness.progress(f"{name}-{device}-{scheme}.png")
    await context.close()


async def main(redis_db: int) -> dict[str, object]:
    from playwright.async_api import async_playwright

    executable = chromium_path()
    if executable is None:
        raise SystemExit("needs Chromium: apt-get install chromium")
    OUT.mkdir(exist_ok=True)
    with harness.postgres_cluster() as cluster:
        await harness.migrate_cluster(cluster)
        async with harness.redis_db(redis_db) as redis, harness.fake_llm() as llm:
            # The question is added up by the sum capability's SQL, by category as a family would want it.
            llm.script(routed_model(sum={"group_by": "category"}))
            settings = harness.make_settings(cluster, llm.base_url, redis)
            async with harness.web_server(settings) as web, harness.worker_in_loop(settings):
                admin = await asyncpg.connect(cluster.admin_dsn)
                try:
                    token, _ = await _seed(web, admin)
                finally:
                    await admin.close()
                async with async_playwright() as playwright:
                    browser = await playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
                    await _seed_in_the_app(browser, web.base_url, token)
                    for device, viewport in DEVICES.items():
                        for scheme in ("light", "dark"):
                            await _shoot(browser, web.base_url, token, device, viewport, scheme)
                    await browser.close()
    return {"screenshots": sorted(p.name for p in OUT.glob("*.png"))}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--redis-db", type=int, default=14, help="Redis database number, flushed (default 14)")
    args = parser.parse_args()
    sys.exit(
        harness.run_benchmark(
            main(args.redis_db), lambda result: f"saved {result['screenshots']} in {OUT}", runner=asyncio.run
        )
    )
