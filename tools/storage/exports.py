"""What an export reads: a household's (or one member's) memories, reminders and events, all of them, oldest first.

A household export holds what its reader may see (the household's rows, their own private ones, none kept from
them); a member's export is what that member wrote or what is theirs. The rule is written into each statement as well
as enforced by row-level security: the command line exports on the owner's connection, which RLS does not bind."""

from __future__ import annotations

import asyncpg

from tools.storage.database import Connection
from tools.storage.visibility import visible_to

MAX_ROWS = 100_000


async def memories(
    conn: Connection, household_id: int, member_id: int | None, viewer_id: int | None
) -> list[asyncpg.Record]:
    """The memories of the export that the viewer may see (whatever role the connection has)."""
    return await conn.fetch(
        f"""SELECT m.id, m.content, m.ai_understanding, m.amount, m.currency, m.occurred_at, m.visibility,
                   m.created_at, u.name AS author, u.forgotten_at IS NOT NULL AS author_forgotten
            FROM memories m LEFT JOIN users u ON u.id = m.author_id
            WHERE m.household_id = $1 AND m.deleted_at IS NULL AND ($2::bigint IS NULL OR m.author_id = $2)
              AND {visible_to("m", "memories", "$4::bigint")}
            ORDER BY m.occurred_at, m.id LIMIT $3""",
        household_id,
        member_id,
        MAX_ROWS,
        viewer_id,
    )


async def reminders(
    conn: Connection, household_id: int, member_id: int | None, viewer_id: int | None
) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"""SELECT r.id, r.text, r.status, r.timezone, r.rrule, r.next_fire_at, r.occurrence_at, r.last_fired_at,
                   r.created_at
            FROM reminders r
            WHERE r.household_id = $1
              AND ($2::bigint IS NULL OR r.created_by = $2 OR $2 = ANY (r.recipient_ids))
              AND {visible_to("r", "reminders", "$4::bigint")}
            ORDER BY r.id LIMIT $3""",
        household_id,
        member_id,
        MAX_ROWS,
        viewer_id,
    )


async def events(
    conn: Connection, household_id: int, member_id: int | None, viewer_id: int | None
) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"""SELECT e.id, e.uid, e.title, e.starts_at, e.ends_at, e.all_day, e.timezone, e.rrule, e.status,
                   e.sequence
            FROM events e
            WHERE e.household_id = $1 AND ($2::bigint IS NULL OR e.member_id = $2 OR e.created_by = $2)
              AND {visible_to("e", "events", "$4::bigint")}
            ORDER BY e.starts_at, e.id LIMIT $3""",
        household_id,
        member_id,
        MAX_ROWS,
        viewer_id,
    )
