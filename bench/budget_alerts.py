"""What the budget check costs a stored expense, and that its alerts fire once per threshold under concurrency.

Several writers (each its own connection, as worker processes are) store expenses with the `store` tool into one
household, all in the one category that has a budget, so every store takes the budget row's lock. Measured: the
`store` call's latency with the budget and without one (another household, same writers), and the alert rows and
outbox messages per threshold, which must be exactly one row and one message per adult (each adult's sum is what
that adult may see).

    .venv/bin/python bench/budget_alerts.py [--writers 4] [--stores 200]

The last stdout line is the JSON of the figures (reported, never asserted).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)
import asyncpg  # noqa: E402

from tests.tools import HashEmbedder  # noqa: E402
from tools.budgets import SetBudgetArgs, set_budget  # noqa: E402
from tools.context import ToolContext  # noqa: E402
from tools.memories import StoreArgs, store  # noqa: E402
from tools.storage.database import Database  # noqa: E402
from tools.storage.households import members  # noqa: E402


async def _writer(db: Database, family: h.Family, member: str, stores: int, amount: str) -> list[float]:
    """One writer's stores, each in its own transaction; the latency of each in ms."""
    user = family.user_ids[member]
    embedder = HashEmbedder(dim=h.EMBEDDING_DIM)
    latencies = []
    for n in range(stores):
        args = StoreArgs.model_validate(
            {"content": f"groceries {n}", "kind": "expense", "category": "groceries", "amount": amount,
             "currency": "EUR"}
        )  # fmt: skip
        started = time.perf_counter()
        async with db.household(family.household_id, user) as conn:
            ctx = ToolContext(conn, family.household_id, user, "Europe/Berlin", datetime.now(UTC), embedder)
            ctx.members = await members(conn, family.household_id)
            await store(ctx, args)
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


async def _round(db: Database, family: h.Family, writers: int, stores: int) -> dict[str, Any]:
    names = list(family.user_ids)
    started = time.monotonic()
    results = await asyncio.gather(
        *(_writer(db, family, names[n % len(names)], stores // writers, "1.00") for n in range(writers))
    )
    elapsed = time.monotonic() - started
    latencies = [ms for result in results for ms in result]
    return {"stores": len(latencies), "stores_per_s": round(len(latencies) / elapsed, 1), **h.summary(latencies)}


async def main(writers: int, stores: int) -> dict[str, Any]:
    with h.postgres_cluster() as cluster:
        await h.migrate_cluster(cluster)
        admin = await asyncpg.connect(cluster.admin_dsn)
        db = await Database.connect(cluster.app_dsn, min_size=writers, max_size=writers)
        try:
            budgeted = await h.make_family(admin, "budgeted", ["Anna", "Ben", "Tom", "Lea"])
            plain = await h.make_family(admin, "plain", ["Anna", "Ben", "Tom", "Lea"])
            anna = budgeted.user_ids["Anna"]
            async with db.household(budgeted.household_id, anna) as conn:
                ctx = ToolContext(conn, budgeted.household_id, anna, "Europe/Berlin", datetime.now(UTC), HashEmbedder())
                # 80 % and 100 % are crossed in the middle of the run: the alerts race with the other writers
                limit = str(stores * 3 // 4)
                await set_budget(ctx, SetBudgetArgs.model_validate({"category": "groceries", "amount": limit,
                                                                     "currency": "EUR"}))  # fmt: skip
            h.progress(f"{writers} writers, {stores} stores each round, budget {limit} EUR of {stores} EUR spent")
            without = await _round(db, plain, writers, stores)
            with_budget = await _round(db, budgeted, writers, stores)
            alerts = await admin.fetch(
                "SELECT threshold, count(*) AS n FROM budget_alerts WHERE household_id = $1 GROUP BY threshold "
                "ORDER BY threshold",
                budgeted.household_id,
            )
            messages = await admin.fetch(
                """SELECT payload ->> 'threshold' AS threshold, count(*) AS n FROM outbox
                   WHERE household_id = $1 AND payload ->> 'kind' = 'budget_alert' GROUP BY 1 ORDER BY 1""",
                budgeted.household_id,
            )
        finally:
            await db.close()
            await admin.close()
    return {
        "writers": writers,
        "store_ms_without_budget": without,
        "store_ms_with_budget": with_budget,
        "alert_rows_per_threshold": {str(r["threshold"]): r["n"] for r in alerts},
        "alert_messages_per_threshold": {str(r["threshold"]): r["n"] for r in messages},
        "adults": 4,
    }


def _summary(result: dict[str, Any]) -> str:
    plain, budget = result["store_ms_without_budget"], result["store_ms_with_budget"]
    return (
        f"store p50 {plain['p50']} ms / p95 {plain['p95']} ms without a budget, p50 {budget['p50']} ms / "
        f"p95 {budget['p95']} ms with one ({result['writers']} writers); alert rows per threshold "
        f"{result['alert_rows_per_threshold']}, messages {result['alert_messages_per_threshold']}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--stores", type=int, default=200)
    options = parser.parse_args()
    sys.exit(h.run_benchmark(main(options.writers, options.stores), _summary))
