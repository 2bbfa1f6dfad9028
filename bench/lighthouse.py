"""Lighthouse on every page of the web app, mobile and desktop presets: the four category scores and the timings
behind performance (first and largest contentful paint, speed index, total blocking time, layout shift). The tests
assert accessibility, best practices and SEO (tests/bot/web/pages/test_lighthouse.py); performance depends on how
busy the machine is, so it is measured here. A demo household on throwaway PostgreSQL, the local Redis (database
13), the scripted model, FAA's web server as `faa serve` composes it and Debian's Chromium.

    .venv/bin/python bench/lighthouse.py        # needs lighthouse in .cache/lighthouse (.ci/run installs it)
"""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import asyncpg  # noqa: E402

from bench import _harness as harness  # noqa: E402
from tests.bot.web.pages.conftest import chromium_path  # noqa: E402
from tests.bot.web.pages.test_lighthouse import LIGHTHOUSE, PRESETS, lighthouse  # noqa: E402
from tools.storage import identities, memories, reminders, web_sessions  # noqa: E402

PAGES = ["/", "/memories", "/reminders", "/calendar", "/lists", "/money", "/data", "/household"]
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
METRICS = {
    "first-contentful-paint": "fcp_ms",
    "largest-contentful-paint": "lcp_ms",
    "speed-index": "si_ms",
    "total-blocking-time": "tbt_ms",
    "cumulative-layout-shift": "cls",
}


async def _seed(web: harness.Web, admin: asyncpg.Connection) -> str:
    """A household with a month's expenses, a note and a reminder; the session cookie of its owner."""
    family = await harness.make_family(admin, "The Millers", ["Sam", "Alex"])
    await admin.execute("UPDATE users SET role = 'owner' WHERE id = $1", family.user_ids["Sam"])
    sam, now = family.user_ids["Sam"], datetime.now(UTC)
    async with web.deps.db.household(family.household_id, sam) as conn:
        for day, (text, category, amount) in enumerate(
            [
                ("Groceries", "groceries", "62.40"),
                ("Electricity", "utilities", "88.00"),
                ("Pizza", "eating-out", "31.50"),
            ]
        ):
            await memories.insert(
                conn, household_id=family.household_id, author_id=sam, content=text,
                understanding={"kind": "expense", "category": category}, embedding=[0.1] * harness.EMBEDDING_DIM,
                amount=Decimal(amount), currency="EUR", occurred_at=now - timedelta(days=day), visibility="household",
                source_inbox_id=None,
            )  # fmt: skip
        at = (now + timedelta(days=1)).replace(minute=0, second=0, microsecond=0)
        await reminders.insert(
            conn, household_id=family.household_id, created_by=sam, recipient_ids=[sam], text="Take out the recycling",
            timezone="Europe/Berlin", rrule="FREQ=WEEKLY", first_fire_at=at, dtstart_local=at.replace(tzinfo=None),
            for_household=False, source_inbox_id=None,
        )  # fmt: skip
        code = await identities.create_invite(conn, family.household_id, sam)
    async with web.deps.db.unscoped() as conn:
        opened = await web_sessions.open_session(conn, code)
    assert opened is not None
    return f"faa_session={opened[1]}"


def _figures(report: dict[str, Any]) -> dict[str, float]:
    scores = {name: round(report["categories"][name]["score"] * 100) for name in CATEGORIES}
    timings = {key: round(report["audits"][audit]["numericValue"], 3) for audit, key in METRICS.items()}
    return {**scores, **timings}


async def main() -> dict[str, Any]:
    chromium = chromium_path()
    if chromium is None:
        raise SystemExit("needs Chromium: apt-get install chromium")
    if not LIGHTHOUSE.is_file():
        raise SystemExit(f"needs lighthouse at {LIGHTHOUSE}: .ci/run installs it from the npm registry")
    pages: dict[str, dict[str, float]] = {}
    with harness.postgres_cluster() as cluster:
        await harness.migrate_cluster(cluster)
        async with harness.redis_db(13) as redis, harness.fake_llm() as llm:
            settings = harness.make_settings(cluster, llm.base_url, redis)
            async with harness.web_server(settings) as web:
                admin = await asyncpg.connect(cluster.admin_dsn)
                try:
                    cookie = await _seed(web, admin)
                finally:
                    await admin.close()
                for preset in PRESETS:
                    for path in PAGES:
                        report = await lighthouse(LIGHTHOUSE, chromium, web.base_url + path, cookie, preset, CATEGORIES)
                        pages[f"{preset} {path}"] = _figures(report)
                        harness.progress(f"{preset} {path}: {pages[f'{preset} {path}']}")
    performance = [figures["performance"] for figures in pages.values()]
    return {
        "pages": pages,
        "performance_min": min(performance),
        "performance_median": sorted(performance)[len(performance) // 2],
    }


if __name__ == "__main__":
    sys.exit(
        harness.run_benchmark(
            main(),
            lambda result: f"performance: min {result['performance_min']}, median {result['performance_median']}",
            runner=asyncio.run,
        )
    )
