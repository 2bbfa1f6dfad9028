"""Screenshots of the web app's main pages for the README: a demo household on throwaway PostgreSQL, the local
Redis (database 14), the scripted model from tests/fakes and Debian's Chromium at a phone's size.

    .venv/bin/python docs/screenshots.py        # writes docs/screenshots/{chat,memories,reminders,money,household}.png
"""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import asyncpg  # noqa: E402

from bench import _harness as harness  # noqa: E402
from tests.bot.web.pages.conftest import CHROMIUM_FLAGS, chromium_path  # noqa: E402
from tests.e2e.scripts import analysis, is_analysis  # noqa: E402
from tests.fakes.openai_server import ChatRequest, Scripted  # noqa: E402
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


def _model(request: ChatRequest) -> Scripted:
    if is_analysis(request):
        plan = {
            "tool": "aggregate",
            "args": {
                "op": "sum",
                "group_by": "category",
                "filter": {"field": "occurred_at", "op": "period", "value": "this_month"},
            },
        }
        return analysis("query", plan=[plan], needs_results=True)
    return Scripted(
        content="This month you spent 320.04 EUR: groceries 100.55, utilities 88.00, clothes 54.99, kids 45.00, "
        "eating out 31.50."
    )


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


async def main() -> dict[str, object]:
    from playwright.async_api import async_playwright

    executable = chromium_path()
    if executable is None:
        raise SystemExit("needs Chromium: apt-get install chromium")
    OUT.mkdir(exist_ok=True)
    with harness.postgres_cluster() as cluster:
        await harness.migrate_cluster(cluster)
        async with harness.redis_db(14) as redis, harness.fake_llm() as llm:
            llm.script(_model)
            settings = harness.make_settings(cluster, llm.base_url, redis)
            async with harness.web_server(settings) as web, harness.worker_in_loop(settings):
                admin = await asyncpg.connect(cluster.admin_dsn)
                try:
                    token, _ = await _seed(web, admin)
                finally:
                    await admin.close()
                async with async_playwright() as playwright:
                    browser = await playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
                    context = await browser.new_context(viewport={"width": 390, "height": 760}, device_scale_factor=2)
                    await context.add_cookies([{"name": "faa_session", "value": token, "url": web.base_url}])
                    page = await context.new_page()
                    await page.goto(web.base_url + "/")
                    await page.fill("#message", "How much did we spend this month?")
                    await page.click("#send")
                    await page.wait_for_selector(".msg.faa[data-outcome]")
                    await page.screenshot(path=OUT / "chat.png")
                    for name in ("memories", "reminders", "money", "household"):
                        await page.goto(f"{web.base_url}/{name}")
                        if name == "household":  # with an invite: its sign-in link as a QR code
                            await page.locator("[data-member=Alex] .invite-button").click()
                        await page.screenshot(path=OUT / f"{name}.png")
                        harness.progress(f"{name}.png")
                    await browser.close()
    return {"screenshots": sorted(p.name for p in OUT.glob("*.png"))}


if __name__ == "__main__":
    sys.exit(
        harness.run_benchmark(main(), lambda result: f"saved {result['screenshots']} in {OUT}", runner=asyncio.run)
    )
