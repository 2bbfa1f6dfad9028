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
from tools.storage.visibility import EVERYONE, Audience

_ITEM = """i.id, i.list_id, l.name AS list_name, l.created_by AS list_author, i.text, i.quantity, i.assignee_id,
           a.name AS assignee, i.done_at, i.created_at, i.created_by, i.visibility, i.hidden_from, i.updated_by,
           cr.name AS creator, ed.name AS editor"""
_ITEM_FROM = """list_items i JOIN lists l ON l.id = i.list_id LEFT JOIN users a ON a.id = i.assignee_id
                LEFT JOIN users cr ON cr.id = i.created_by LEFT JOIN users ed ON ed.id = i.updated_by"""
_LIST = "l.id, l.name, l.kind, l.created_by, l.visibility, l.hidden_from, l.updated_by, cr.name AS creator"
_LIST_FROM = "lists l LEFT JOIN users cr ON cr.id = l.created_by"
# Of the lists one name reaches, the household's first, then one kept from a member, then a private one.
_PREFERENCE = "(l.visibility = 'private'), (l.hidden_from IS NOT NULL), l.id"


@dataclass(frozen=True)
class NewItem:
    text: str
    quantity: str | None
    assignee_id: int | None


async def all_lists(conn: Connection, household_id: int) -> list[asyncpg.Record]:
    """Every list of the household (that the transaction's member may see) with its count of open items, oldest
    list first."""
    return list(
        await conn.fetch(
            f"""SELECT {_LIST}, l.created_at,
                       count(i.id) FILTER (WHERE i.done_at IS NULL AND i.cleared_at IS NULL) AS open_items
                FROM {_LIST_FROM} LEFT JOIN list_items i ON i.list_id = l.id
                WHERE l.household_id = $1 GROUP BY l.id, cr.name ORDER BY l.created_at, l.id""",
            household_id,
        )
    )


async def find_list(
    conn: Connection, household_id: int, name: str, audience: Audience | None = None
) -> asyncpg.Record | None:
    """The list of that name the member sees — of the given audience when one is asked for, else the household's
    before one kept from a member before a private one."""
    return await conn.fetchrow(
        f"""SELECT {_LIST} FROM {_LIST_FROM}
            WHERE l.household_id = $1 AND lower(l.name) = lower($2)
              AND ($3::text IS NULL OR (l.visibility = $3 AND l.hidden_from IS NOT DISTINCT FROM $4))
            ORDER BY {_PREFERENCE} LIMIT 1""",
        household_id,
        name,
        None if audience is None else audience.visibility,
        None if audience is None else audience.hidden_from,
    )


async def get_list(conn: Connection, household_id: int, list_id: int, *, lock: bool = False) -> asyncpg.Record | None:
    return await conn.fetchrow(
        f"SELECT {_LIST} FROM {_LIST_FROM} WHERE l.household_id = $1 AND l.id = $2"
        + (" FOR UPDATE OF l" if lock else ""),
        household_id,
        list_id,
    )


# Each audience has its own unique index on the name (0015_privacy.sql), and ON CONFLICT names the one it meets.
_CONFLICT = {
    "household": "(household_id, lower(name)) WHERE visibility = 'household' AND hidden_from IS NULL",
    "hidden": "(household_id, hidden_from, lower(name)) WHERE hidden_from IS NOT NULL",
    "private": "(household_id, created_by, lower(name)) WHERE visibility = 'private'",
}


async def ensure_list(
    conn: Connection, household_id: int, name: str, kind: str, created_by: int, audience: Audience = EVERYONE
) -> asyncpg.Record:
    """The list of that name and audience, created when there is none; two members creating it at once get one
    list."""
    scope = "private" if audience.private else "hidden" if audience.hidden_from is not None else "household"
    return await fetch_one(
        conn,
        f"""WITH l AS (
                INSERT INTO lists (household_id, name, kind, created_by, visibility, hidden_from)
                VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT {_CONFLICT[scope]} DO UPDATE SET name = lists.name
                RETURNING *, (xmax = 0) AS created)
            SELECT {_LIST}, l.created FROM l LEFT JOIN users cr ON cr.id = l.created_by""",
        household_id,
        name,
        kind,
        created_by,
        audience.visibility,
        audience.hidden_from,
    )


async def add_items(
    conn: Connection,
    household_id: int,
    list_id: int,
    items: list[NewItem],
    *,
    created_by: int,
    inbox_id: int | None,
    audience: Audience = EVERYONE,
) -> list[asyncpg.Record]:
    """Insert the items, in the order given; the new rows."""
    ids = [
        await conn.fetchval(
            """INSERT INTO list_items (household_id, list_id, text, quantity, assignee_id, created_by, source_inbox_id,
                                       visibility, hidden_from)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id""",
            household_id,
            list_id,
            item.text,
            item.quantity,
            item.assignee_id,
            created_by,
            inbox_id,
            audience.visibility,
            audience.hidden_from,
        )
        for item in items
    ]
    return await by_ids(conn, household_id, [int(i) for i in ids])


async def by_ids(
    conn: Connection, household_id: int, item_ids: list[int], *, lock: bool = False
) -> list[asyncpg.Record]:
    """The items with these ids still on their lists, in the order given."""
    rows = await conn.fetch(
        f"""SELECT {_ITEM} FROM {_ITEM_FROM}
            WHERE i.household_id = $1 AND i.id = ANY($2::bigint[]) AND i.cleared_at IS NULL"""
        + (" FOR UPDATE OF i" if lock else ""),
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
               quantity = CASE WHEN $7 THEN $6::text ELSE quantity END,
               updated_by = $8, updated_at = now()
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
    updated_by: int | None,
) -> None:
    """Put an item's changeable fields, and who changed it last, back as they were (undo)."""
    await conn.execute(
        """UPDATE list_items SET done_at = $3, done_by = CASE WHEN $3::timestamptz IS NULL THEN NULL ELSE done_by END,
                  assignee_id = $4, quantity = $5, updated_by = $6, updated_at = now()
           WHERE household_id = $1 AND id = $2""",
        household_id,
        item_id,
        done_at,
        assignee_id,
        quantity,
        updated_by,
    )


async def clear_done(
    conn: Connection, household_id: int, list_id: int, *, by: int, everything: bool = False
) -> list[int]:
    """Take the ticked items off the list, or every item (`everything`: the list emptied); their ids."""
    rows = await conn.fetch(
        """UPDATE list_items SET cleared_at = now(), updated_by = $3, updated_at = now()
           WHERE household_id = $1 AND list_id = $2 AND ($4 OR done_at IS NOT NULL) AND cleared_at IS NULL
           RETURNING id""",
        household_id,
        list_id,
        by,
        everything,
    )
    return sorted(int(r["id"]) for r in rows)


async def set_cleared(
    conn: Connection, household_id: int, item_ids: list[int], *, cleared: bool, by: int | None
) -> int:
    """Take items off their list (cleared) or put them back (undo); how many changed."""
    result = await conn.execute(
        """UPDATE list_items SET cleared_at = CASE WHEN $3 THEN now() ELSE NULL END, updated_by = $4, updated_at = now()
           WHERE household_id = $1 AND id = ANY($2::bigint[]) AND (cleared_at IS NULL) = $3""",
        household_id,
        item_ids,
        cleared,
        by,
    )
    return int(result.split()[-1])


async def editors(conn: Connection, household_id: int, item_ids: list[int]) -> dict[int, int | None]:
    """Who changed each of these items last, cleared ones included (undo checks nobody else did since)."""
    rows = await conn.fetch(
        "SELECT id, updated_by FROM list_items WHERE household_id = $1 AND id = ANY($2::bigint[])",
        household_id,
        item_ids,
    )
    return {int(r["id"]): r["updated_by"] for r in rows}
