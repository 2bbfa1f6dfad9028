"""The `lists` and `list_items` tables: the household's shared lists and their items.

Every item is its own row and every change touches one row (or, for clearing, only rows already done), so edits
by several members at once never overwrite each other. Every statement names the household besides row-level
security.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from tools.storage.database import Connection, fetch_one

_ITEM = """i.id, i.list_id, l.name AS list_name, i.text, i.quantity, i.assignee_id, a.name AS assignee,
           i.done_at, i.created_at"""
_ITEM_FROM = "list_items i JOIN lists l ON l.id = i.list_id LEFT JOIN users a ON a.id = i.assignee_id"


@dataclass(frozen=True)
class NewItem:
    text: str
    quantity: str | None
    assignee_id: int | None


async def all_lists(conn: Connection, household_id: int) -> list[asyncpg.Record]:
    """Every list of the household with its count of open items, oldest list first."""
    return list(
        await conn.fetch(
            """SELECT l.id, l.name, l.kind, l.created_at,
                      count(i.id) FILTER (WHERE i.done_at IS NULL AND i.cleared_at IS NULL) AS open_items
               FROM lists l LEFT JOIN list_items i ON i.list_id = l.id
               WHERE l.household_id = $1 GROUP BY l.id ORDER BY l.created_at, l.id""",
            household_id,
        )
    )


async def find_list(conn: Connection, household_id: int, name: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        "SELECT id, name, kind FROM lists WHERE household_id = $1 AND lower(name) = lower($2)", household_id, name
    )


async def get_list(conn: Connection, household_id: int, list_id: int) -> asyncpg.Record | None:
    return await conn.fetchrow(
        "SELECT id, name, kind FROM lists WHERE household_id = $1 AND id = $2", household_id, list_id
    )


async def ensure_list(conn: Connection, household_id: int, name: str, kind: str, created_by: int) -> asyncpg.Record:
    """The list of that name, created when the household has none; two members creating it at once get one list."""
    return await fetch_one(
        conn,
        """INSERT INTO lists (household_id, name, kind, created_by) VALUES ($1, $2, $3, $4)
           ON CONFLICT (household_id, lower(name)) DO UPDATE SET name = lists.name
           RETURNING id, name, kind, (xmax = 0) AS created""",
        household_id,
        name,
        kind,
        created_by,
    )


async def add_items(
    conn: Connection, household_id: int, list_id: int, items: list[NewItem], *, created_by: int, inbox_id: int | None
) -> list[asyncpg.Record]:
    """Insert the items, in the order given; the new rows."""
    ids = [
        await conn.fetchval(
            """INSERT INTO list_items (household_id, list_id, text, quantity, assignee_id, created_by, source_inbox_id)
               VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id""",
            household_id,
            list_id,
            item.text,
            item.quantity,
            item.assignee_id,
            created_by,
            inbox_id,
        )
        for item in items
    ]
    return await by_ids(conn, household_id, [int(i) for i in ids])


async def by_ids(conn: Connection, household_id: int, item_ids: list[int]) -> list[asyncpg.Record]:
    rows = await conn.fetch(
        f"""SELECT {_ITEM} FROM {_ITEM_FROM}
            WHERE i.household_id = $1 AND i.id = ANY($2::bigint[]) AND i.cleared_at IS NULL""",
        household_id,
        item_ids,
    )
    order = {item_id: n for n, item_id in enumerate(item_ids)}
    return sorted(rows, key=lambda row: order[row["id"]])


async def items(
    conn: Connection, household_id: int, list_id: int | None, *, include_done: bool, limit: int = 200
) -> list[asyncpg.Record]:
    """The items of one list (or of all lists), open ones first, each group in the order they were added."""
    return list(
        await conn.fetch(
            f"""SELECT {_ITEM} FROM {_ITEM_FROM}
                WHERE i.household_id = $1 AND ($2::bigint IS NULL OR i.list_id = $2) AND i.cleared_at IS NULL
                      AND ($3 OR i.done_at IS NULL)
                ORDER BY i.done_at IS NOT NULL, i.created_at, i.id LIMIT $4""",
            household_id,
            list_id,
            include_done,
            limit,
        )
    )


async def update_item(
    conn: Connection,
    household_id: int,
    item_id: int,
    *,
    done: bool | None,
    assignee_id: int | None,
    set_assignee: bool,
    quantity: str | None,
    set_quantity: bool,
    by: int,
) -> asyncpg.Record | None:
    """Tick or untick, assign or unassign, change the quantity of one item; the row as it now is (None: no such
    live item). Only the fields asked for change, in one statement on the one row."""
    item_id = await conn.fetchval(
        """UPDATE list_items SET
               done_at = CASE WHEN $3::boolean IS NULL THEN done_at
                              WHEN $3 THEN coalesce(done_at, now()) ELSE NULL END,
               done_by = CASE WHEN $3::boolean IS NULL THEN done_by WHEN $3 THEN $8::bigint ELSE NULL END,
               assignee_id = CASE WHEN $5 THEN $4::bigint ELSE assignee_id END,
               quantity = CASE WHEN $7 THEN $6::text ELSE quantity END
           WHERE household_id = $1 AND id = $2 AND cleared_at IS NULL RETURNING id""",
        household_id,
        item_id,
        done,
        assignee_id,
        set_assignee,
        quantity,
        set_quantity,
        by,
    )
    if item_id is None:
        return None
    [row] = await by_ids(conn, household_id, [int(item_id)])
    return row


async def restore_item(
    conn: Connection,
    household_id: int,
    item_id: int,
    *,
    done_at: datetime | None,
    assignee_id: int | None,
    quantity: str | None,
) -> None:
    """Put an item's changeable fields back as they were (undo)."""
    await conn.execute(
        """UPDATE list_items SET done_at = $3, done_by = CASE WHEN $3::timestamptz IS NULL THEN NULL ELSE done_by END,
                  assignee_id = $4, quantity = $5
           WHERE household_id = $1 AND id = $2""",
        household_id,
        item_id,
        done_at,
        assignee_id,
        quantity,
    )


async def clear_done(conn: Connection, household_id: int, list_id: int) -> list[int]:
    """Take the ticked items off the list; their ids."""
    rows = await conn.fetch(
        """UPDATE list_items SET cleared_at = now()
           WHERE household_id = $1 AND list_id = $2 AND done_at IS NOT NULL AND cleared_at IS NULL RETURNING id""",
        household_id,
        list_id,
    )
    return sorted(int(r["id"]) for r in rows)


async def set_cleared(conn: Connection, household_id: int, item_ids: list[int], *, cleared: bool) -> int:
    """Take items off their list (cleared) or put them back (undo); how many changed."""
    result = await conn.execute(
        """UPDATE list_items SET cleared_at = CASE WHEN $3 THEN now() ELSE NULL END
           WHERE household_id = $1 AND id = ANY($2::bigint[]) AND (cleared_at IS NULL) = $3""",
        household_id,
        item_ids,
        cleared,
    )
    return int(result.split()[-1])
