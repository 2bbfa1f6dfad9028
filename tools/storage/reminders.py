"""The `reminders` rows the reminder tools read and write, the firings they acknowledge, and members' quiet hours.

Firing reminders (due rows, outbox rows, the next occurrence) is `tools.storage.firings`.
"""

from __future__ import annotations

from datetime import datetime, time
from typing import Any

import asyncpg

from tools.storage.database import Connection, fetch_one
from tools.storage.visibility import EVERYONE, Audience

_COLUMNS = (
    "r.id, r.text, r.status, r.next_fire_at, r.timezone, r.rrule, r.recipient_ids, r.for_household, r.created_by, "
    "r.last_fired_at, r.occurrence_at, r.dtstart_local, r.visibility, r.hidden_from, r.updated_by"
)


async def members(conn: Connection, household_id: int) -> dict[int, asyncpg.Record]:
    """The household's members (id, name, timezone) by id."""
    rows = await conn.fetch("SELECT id, name, timezone FROM users WHERE household_id = $1", household_id)
    return {int(r["id"]): r for r in rows}


async def insert(
    conn: Connection,
    *,
    household_id: int,
    created_by: int,
    recipient_ids: list[int],
    text: str,
    timezone: str,
    rrule: str | None,
    first_fire_at: datetime,
    dtstart_local: datetime,
    for_household: bool,
    source_inbox_id: int | None,
    audience: Audience = EVERYONE,
) -> asyncpg.Record:
    return await fetch_one(
        conn,
        f"""WITH r AS (
                INSERT INTO reminders (household_id, created_by, recipient_ids, text, timezone, rrule, next_fire_at,
                                       occurrence_at, dtstart_local, for_household, source_inbox_id,
                                       changed_by_inbox_id, visibility, hidden_from)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9, $10, $10, $11, $12) RETURNING *)
            SELECT {_COLUMNS} FROM r""",
        household_id,
        created_by,
        recipient_ids,
        text,
        timezone,
        rrule,
        first_fire_at,
        dtstart_local,
        for_household,
        source_inbox_id,
        audience.visibility,
        audience.hidden_from,
    )


async def of_member(
    conn: Connection, household_id: int, user_id: int, *, include_finished: bool, limit: int
) -> list[asyncpg.Record]:
    """The member's reminders: for them, for the whole household, and those they set; active ones first."""
    return await conn.fetch(
        f"""SELECT {_COLUMNS} FROM reminders r
            WHERE r.household_id = $1 AND ($2 = ANY(r.recipient_ids) OR r.for_household OR r.created_by = $2)
              AND ($3 OR r.status = 'active')
            ORDER BY r.status = 'active' DESC, r.next_fire_at NULLS LAST, r.id DESC LIMIT $4""",
        household_id,
        user_id,
        include_finished,
        limit,
    )


async def lock(conn: Connection, household_id: int, reminder_id: int) -> asyncpg.Record | None:
    """One reminder, locked for the rest of the transaction."""
    return await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM reminders r WHERE r.household_id = $1 AND r.id = $2 FOR UPDATE",
        household_id,
        reminder_id,
    )


async def update(
    conn: Connection,
    household_id: int,
    reminder_id: int,
    *,
    status: str,
    next_fire_at: datetime | None,
    occurrence_at: Any,
    changed_by_inbox_id: int | None,
    by: int | None,
    dtstart_local: datetime | None = None,
) -> asyncpg.Record:
    """Change a reminder's schedule; `by` is the member who changed it; `dtstart_local`, when given, is the wall time
    its rule repeats from (a repeating reminder moved to another time of day)."""
    return await fetch_one(
        conn,
        f"""WITH r AS (
                UPDATE reminders SET status = $3, next_fire_at = $4, occurrence_at = $5, changed_by_inbox_id = $6,
                       updated_at = now(), updated_by = $7, dtstart_local = coalesce($8, dtstart_local)
                WHERE household_id = $1 AND id = $2 RETURNING *)
            SELECT {_COLUMNS} FROM r""",
        household_id,
        reminder_id,
        status,
        next_fire_at,
        occurrence_at,
        changed_by_inbox_id,
        by,
        dtstart_local,
    )


async def last_sent_occurrence(conn: Connection, reminder_id: int) -> datetime | None:
    """The occurrence the reminder's latest firing stood for."""
    occurrence: datetime | None = await conn.fetchval(
        "SELECT occurrence_at FROM reminder_firings WHERE reminder_id = $1 ORDER BY fire_at DESC LIMIT 1",
        reminder_id,
    )
    return occurrence


async def acknowledge_firings(conn: Connection, household_id: int, reminder_id: int, at: datetime) -> None:
    await conn.execute(
        """UPDATE reminder_firings SET acknowledged_at = $3
           WHERE household_id = $1 AND reminder_id = $2 AND acknowledged_at IS NULL""",
        household_id,
        reminder_id,
        at,
    )


def state(row: asyncpg.Record) -> dict[str, Any]:
    """A reminder's schedule (and who changed it last) as JSON-ready values: its state before a change, to undo it."""
    return {
        "status": row["status"],
        "next_fire_at": None if row["next_fire_at"] is None else row["next_fire_at"].isoformat(),
        "occurrence_at": None if row["occurrence_at"] is None else row["occurrence_at"].isoformat(),
        "dtstart_local": row["dtstart_local"].isoformat(),
        "updated_by": row["updated_by"],
    }


async def set_quiet_hours(
    conn: Connection, household_id: int, user_id: int, start: time | None, end: time | None
) -> None:
    await conn.execute(
        "UPDATE users SET quiet_start = $3, quiet_end = $4 WHERE household_id = $1 AND id = $2",
        household_id,
        user_id,
        start,
        end,
    )


async def quiet_hours(conn: Connection, household_id: int, user_id: int) -> tuple[time | None, time | None]:
    """The member's quiet hours (start, end) on their clock; (None, None) when they have none."""
    row = await conn.fetchrow(
        "SELECT quiet_start, quiet_end FROM users WHERE household_id = $1 AND id = $2", household_id, user_id
    )
    return (None, None) if row is None else (row["quiet_start"], row["quiet_end"])
