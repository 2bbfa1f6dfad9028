"""The `memories` table: insert, find (by conditions or by meaning), lock, update, forget and restore.

Every statement names the household explicitly besides row-level security, so a mistake in one layer is not a leak.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

import asyncpg

from tools.storage.database import Connection, fetch_one

Order = Literal["relevance", "newest", "oldest", "amount_desc", "amount_asc"]
Condition = Callable[[list[Any]], str]  # appends its parameters to the list and returns its SQL

_COLUMNS = (
    "m.id, m.author_id, m.content, m.ai_understanding, m.amount, m.currency, m.occurred_at, m.visibility, "
    "m.hidden_from, m.updated_by, m.updated_at, u.name AS author, ed.name AS editor"
)
_FROM = "LEFT JOIN users u ON u.id = m.author_id LEFT JOIN users ed ON ed.id = m.updated_by"
_ORDER = {
    "newest": "m.occurred_at DESC, m.id DESC",
    "oldest": "m.occurred_at, m.id",
    "amount_desc": "m.amount DESC NULLS LAST, m.occurred_at DESC",
    "amount_asc": "m.amount NULLS LAST, m.occurred_at DESC",
    "relevance": "m.distance, m.id",
}


def hnsw_ef_search(limit: int) -> int:
    """Candidates the HNSW scan keeps: pgvector's default 40, or twice the results asked for when that is more.
    Rows the household filter drops are made up by the iterative scan, not by a wider first pass."""
    return max(40, 2 * limit)


async def insert(
    conn: Connection,
    *,
    household_id: int,
    author_id: int,
    content: str,
    understanding: dict[str, Any],
    embedding: list[float],
    amount: Decimal | None,
    currency: str | None,
    occurred_at: datetime,
    visibility: str,
    source_inbox_id: int | None,
    hidden_from: int | None = None,
) -> asyncpg.Record:
    """The new row, with its author's name."""
    return await fetch_one(
        conn,
        f"""WITH m AS (
                INSERT INTO memories (household_id, author_id, content, ai_understanding, embedding, amount,
                                      currency, occurred_at, visibility, source_inbox_id, hidden_from)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *)
            SELECT {_COLUMNS} FROM m {_FROM}""",
        household_id,
        author_id,
        content,
        understanding,
        embedding,
        amount,
        currency,
        occurred_at,
        visibility,
        source_inbox_id,
        hidden_from,
    )


async def find(
    conn: Connection,
    household_id: int,
    *,
    condition: Condition | None,
    order: Order,
    limit: int,
    near: list[float] | None = None,
) -> list[asyncpg.Record]:
    """The household's live memories that meet `condition`: the `limit` nearest to the vector `near` (each with
    its `distance`), or without it the first `limit` in `order` ("relevance" then means newest)."""
    params: list[Any] = [household_id]
    where = ["m.household_id = $1", "m.deleted_at IS NULL"]
    if condition is not None:
        where.append(condition(params))
    if near is None:
        order = "newest" if order == "relevance" else order
        params.append(limit)
        sql = (
            f"SELECT {_COLUMNS} FROM memories m {_FROM} WHERE {' AND '.join(where)} "
            f"ORDER BY {_ORDER[order]} LIMIT ${len(params)}"
        )
        return await conn.fetch(sql, *params)
    await conn.execute(
        "SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)",
        str(hnsw_ef_search(limit)),
    )
    params.append(near)
    vector = f"${len(params)}::vector"
    params.append(limit)
    # relaxed_order may return the nearest rows slightly out of order: the outer query sorts them exactly.
    sql = f"""WITH m AS MATERIALIZED (
                  SELECT m.*, m.embedding <=> {vector} AS distance FROM memories m
                  WHERE {" AND ".join(where)} AND m.embedding IS NOT NULL
                  ORDER BY m.embedding <=> {vector} LIMIT ${len(params)})
              SELECT {_COLUMNS}, m.distance FROM m {_FROM} ORDER BY {_ORDER[order]}"""
    return await conn.fetch(sql, *params)


async def lock(conn: Connection, household_id: int, memory_id: int) -> asyncpg.Record | None:
    """A live memory, locked for the rest of the transaction."""
    return await conn.fetchrow(
        f"""SELECT {_COLUMNS} FROM memories m {_FROM}
            WHERE m.household_id = $1 AND m.id = $2 AND m.deleted_at IS NULL FOR UPDATE OF m""",
        household_id,
        memory_id,
    )


async def update(
    conn: Connection,
    household_id: int,
    memory_id: int,
    *,
    content: str,
    understanding: dict[str, Any],
    embedding: list[float] | None,
    amount: Decimal | None,
    currency: str | None,
    occurred_at: datetime,
    visibility: str,
    hidden_from: int | None,
    by: int | None,
) -> asyncpg.Record:
    """The row as now stored; `embedding=None` keeps the old vector. `by` made the change."""
    return await fetch_one(
        conn,
        f"""WITH m AS (
                UPDATE memories SET content = $3, ai_understanding = $4, embedding = coalesce($5::vector, embedding),
                       amount = $6, currency = $7, occurred_at = $8, visibility = $9, hidden_from = $10,
                       updated_by = $11, updated_at = now()
                WHERE household_id = $1 AND id = $2 RETURNING *)
            SELECT {_COLUMNS} FROM m {_FROM}""",
        household_id,
        memory_id,
        content,
        understanding,
        embedding,
        amount,
        currency,
        occurred_at,
        visibility,
        hidden_from,
        by,
    )


async def forget(conn: Connection, household_id: int, memory_ids: list[int], *, by: int | None) -> list[int]:
    """Soft-delete live memories; the ids that were forgotten now."""
    rows = await conn.fetch(
        """UPDATE memories SET deleted_at = now(), updated_at = now(), updated_by = $3
           WHERE household_id = $1 AND id = ANY($2::bigint[]) AND deleted_at IS NULL RETURNING id""",
        household_id,
        memory_ids,
        by,
    )
    return [row["id"] for row in rows]


async def restore(conn: Connection, household_id: int, memory_ids: list[int], *, by: int | None) -> list[int]:
    """Bring forgotten memories back; the ids that were restored now."""
    rows = await conn.fetch(
        """UPDATE memories SET deleted_at = NULL, updated_at = now(), updated_by = $3
           WHERE household_id = $1 AND id = ANY($2::bigint[]) AND deleted_at IS NOT NULL RETURNING id""",
        household_id,
        memory_ids,
        by,
    )
    return [row["id"] for row in rows]


async def forgotten(conn: Connection, household_id: int, memory_ids: list[int]) -> list[asyncpg.Record]:
    """The forgotten memories with these ids (what `restore` would bring back)."""
    return await conn.fetch(
        f"""SELECT {_COLUMNS} FROM memories m {_FROM}
            WHERE m.household_id = $1 AND m.id = ANY($2::bigint[]) AND m.deleted_at IS NOT NULL""",
        household_id,
        memory_ids,
    )


def values(row: asyncpg.Record) -> dict[str, Any]:
    """What `update` writes, as JSON-ready values: a memory's state before a change, to undo it."""
    return {
        "content": row["content"],
        "ai_understanding": row["ai_understanding"] or {},
        "amount": None if row["amount"] is None else str(row["amount"]),
        "currency": row["currency"],
        "occurred_at": row["occurred_at"].isoformat(),
        "visibility": row["visibility"],
        "hidden_from": row["hidden_from"],
        "updated_by": row["updated_by"],
    }


async def by_ids(conn: Connection, household_id: int, memory_ids: list[int]) -> list[asyncpg.Record]:
    """The live memories with these ids."""
    return await conn.fetch(
        f"""SELECT {_COLUMNS} FROM memories m {_FROM}
            WHERE m.household_id = $1 AND m.id = ANY($2::bigint[]) AND m.deleted_at IS NULL""",
        household_id,
        memory_ids,
    )


# The words a household's own rows use, so the model can pick among them instead of inventing new ones.


async def categories(conn: Connection, household_id: int, *, kind: str | None = None, limit: int = 40) -> list[str]:
    """The categories of live memories (of one kind, when given), most used first."""
    rows = await conn.fetch(
        """SELECT category FROM memories
           WHERE household_id = $1 AND deleted_at IS NULL AND category IS NOT NULL AND ($2::text IS NULL OR kind = $2)
           GROUP BY category ORDER BY count(*) DESC, category LIMIT $3""",
        household_id,
        kind,
        limit,
    )
    return [row["category"] for row in rows]


async def names(
    conn: Connection, household_id: int, key: Literal["merchant", "person"], *, limit: int = 40
) -> list[str]:
    """The merchants (or the people) named in live memories, most used first, as first written."""
    rows = await conn.fetch(
        f"""SELECT min(ai_understanding ->> '{key}') AS name FROM memories
            WHERE household_id = $1 AND deleted_at IS NULL AND {key}_key IS NOT NULL
            GROUP BY {key}_key ORDER BY count(*) DESC, {key}_key LIMIT $2""",
        household_id,
        limit,
    )
    return [row["name"] for row in rows]


async def people_mentioned(conn: Connection, household_id: int, word: str, *, limit: int = 5) -> list[str]:
    """The people of the live memories whose text says `word` ("女儿游泳课" about Mia: Mia), most often first."""
    rows = await conn.fetch(
        """SELECT min(ai_understanding ->> 'person') AS name FROM memories
           WHERE household_id = $1 AND deleted_at IS NULL AND person_key IS NOT NULL
             AND strpos(lower(content), lower($2)) > 0
           GROUP BY person_key ORDER BY count(*) DESC, person_key LIMIT $3""",
        household_id,
        word,
        limit,
    )
    return [row["name"] for row in rows]


async def usual_currency(conn: Connection, household_id: int) -> str | None:
    """The currency the household's recent money memories use most, if it has any."""
    value = await conn.fetchval(
        """SELECT currency FROM memories
           WHERE household_id = $1 AND deleted_at IS NULL AND currency IS NOT NULL
           GROUP BY currency ORDER BY count(*) DESC, max(occurred_at) DESC LIMIT 1""",
        household_id,
    )
    return None if value is None else str(value)


async def last_stored_ids(conn: Connection, household_id: int, author_id: int, before_inbox_id: int) -> list[int]:
    """The live memories the member's two messages before `before_inbox_id` stored, newest first: what "that" or
    "it" in a correction most likely means."""
    rows = await conn.fetch(
        """SELECT m.id FROM memories m
           WHERE m.household_id = $1 AND m.deleted_at IS NULL AND m.source_inbox_id IN (
               SELECT i.id FROM inbox i WHERE i.household_id = $1 AND i.user_id = $2 AND i.id < $3
               ORDER BY i.id DESC LIMIT 2)
           ORDER BY m.id DESC LIMIT 5""",
        household_id,
        author_id,
        before_inbox_id,
    )
    return [row["id"] for row in rows]
