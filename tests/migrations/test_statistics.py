"""The planner knows how common a memory field's value is (expression statistics), instead of guessing 0.5%."""

from __future__ import annotations

import json

import asyncpg

from tests.tools import make_family


async def test_a_category_filter_is_estimated_from_statistics(admin_conn: asyncpg.Connection) -> None:
    family = await make_family(admin_conn, "Anna")
    total = await admin_conn.fetchval("SELECT count(*) FROM memories")
    common = max(200, total // 4)  # a quarter of all memories, at least 200
    await admin_conn.execute(
        """INSERT INTO memories (household_id, author_id, content, ai_understanding, occurred_at, visibility)
           SELECT $1, $2, 'Paid at the bakery', '{"kind": "expense", "category": "stats-bakery"}', now(), 'household'
           FROM generate_series(1, $3)""",
        family.household_id,
        family.id("Anna"),
        common,
    )
    await admin_conn.execute("ANALYZE memories")
    plan = await admin_conn.fetchval(
        "EXPLAIN (FORMAT JSON) SELECT * FROM memories WHERE ai_understanding ->> 'category' = 'stats-bakery'"
    )
    estimated = json.loads(plan)[0]["Plan"]["Plan Rows"]
    assert estimated > common / 3  # without statistics: 0.5% of the table
    await admin_conn.execute("DELETE FROM memories WHERE household_id = $1", family.household_id)
