"""The words a household's own rows use — its categories, merchants and usual currency — so the model can pick
among them instead of inventing new ones."""

from __future__ import annotations

from datetime import datetime

from tools.database import Connection


async def categories(conn: Connection, household_id: int, *, limit: int = 40) -> list[str]:
    """The categories of live memories, most used first."""
    rows = await conn.fetch(
        """SELECT category FROM memories
           WHERE household_id = $1 AND deleted_at IS NULL AND category IS NOT NULL
           GROUP BY category ORDER BY count(*) DESC, category LIMIT $2""",
        household_id,
        limit,
    )
    return [row["category"] for row in rows]


async def merchants(conn: Connection, household_id: int, *, limit: int = 40) -> list[str]:
    """The merchants named in live memories, most used first, as first written."""
    rows = await conn.fetch(
        """SELECT min(ai_understanding ->> 'merchant') AS merchant FROM memories
           WHERE household_id = $1 AND deleted_at IS NULL AND merchant_key IS NOT NULL
           GROUP BY merchant_key ORDER BY count(*) DESC, merchant_key LIMIT $2""",
        household_id,
        limit,
    )
    return [row["merchant"] for row in rows]


async def usual_currency(conn: Connection, household_id: int) -> str | None:
    """The currency the household's recent money memories use most, if it has any."""
    value = await conn.fetchval(
        """SELECT currency FROM memories
           WHERE household_id = $1 AND deleted_at IS NULL AND currency IS NOT NULL
           GROUP BY currency ORDER BY count(*) DESC, max(occurred_at) DESC LIMIT 1""",
        household_id,
    )
    return None if value is None else str(value)


async def recent_memory_ids(conn: Connection, household_id: int, author_id: int, since: datetime) -> list[int]:
    """The live memories a member stored since `since`, newest first: what "that" or "it" most likely means."""
    rows = await conn.fetch(
        """SELECT id FROM memories
           WHERE household_id = $1 AND author_id = $2 AND deleted_at IS NULL AND created_at >= $3
           ORDER BY created_at DESC, id DESC LIMIT 5""",
        household_id,
        author_id,
        since,
    )
    return [row["id"] for row in rows]
