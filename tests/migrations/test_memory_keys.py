"""The memory fields the tools filter on reach their indexes under row-level security (0008_memory_keys.sql):
RLS keeps conditions that are not leakproof, such as `ai_understanding ->> 'category' = …`, behind its own, so
they can only filter the rows another index found."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest

from tests.tools import make_family
from tools.filters import Condition, compile_filter
from tools.storage.database import Database


@dataclass(frozen=True)
class _Scope:
    household_id: int
    timezone: str = "Europe/Berlin"
    now: datetime = datetime(2026, 11, 22, 12, tzinfo=UTC)


def _index_conditions(node: dict[str, Any]) -> dict[str, str]:
    """Index name -> its index condition, over the whole plan."""
    found = {node["Index Name"]: node.get("Index Cond", "")} if "Index Name" in node else {}
    for child in node.get("Plans", []):
        found.update(_index_conditions(child))
    return found


@pytest.mark.parametrize(
    ("field", "value", "index", "column"),
    [
        ("category", "keys-bakery", "memories_category", "category"),
        ("kind", "contact", "memories_kind", "kind"),
        ("person", "Keys-Tom", "memories_person", "person_key"),
        ("merchant", "KEYS-BAKER", "memories_merchant", "merchant_key"),
    ],
)
async def test_a_field_filter_under_rls_is_an_index_condition(
    admin_conn: asyncpg.Connection, db: Database, field: str, value: str, index: str, column: str
) -> None:
    family = await make_family(admin_conn, "Anna")
    # 2,000 memories of one household, 20 of them with the value: an index on the field is the way to them.
    await admin_conn.execute(
        """INSERT INTO memories (household_id, author_id, content, ai_understanding, occurred_at)
           SELECT $1, $2, 'note ' || i,
                  CASE WHEN i % 100 = 0 THEN jsonb_build_object($3::text, $4::text)
                       ELSE jsonb_build_object($3::text, 'other-' || (i % 7)) END,
                  now() - make_interval(days => i % 365)
           FROM generate_series(1, 2000) AS i""",
        family.household_id,
        family.id("Anna"),
        field,
        value,
    )
    await admin_conn.execute("ANALYZE memories")
    params: list[Any] = [family.household_id]
    where = compile_filter(Condition(field=field, op="eq", value=value), params, _Scope(family.household_id))
    sql = f"SELECT count(*) FROM memories m WHERE m.household_id = $1 AND m.deleted_at IS NULL AND {where}"
    try:
        async with db.household(family.household_id, family.id("Anna")) as conn:
            assert await conn.fetchval(sql, *params) == 20
            await conn.execute("SET LOCAL enable_seqscan = off")
            plan = (await conn.fetchval(f"EXPLAIN (FORMAT JSON) {sql}", *params))[0]["Plan"]  # json: decoded
        assert column in _index_conditions(plan).get(index, ""), plan
    finally:
        await admin_conn.execute("DELETE FROM memories WHERE household_id = $1", family.household_id)
