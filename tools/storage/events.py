"""The `events` rows of the calendar, and the reminders that hang off them (which move when their event moves)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

from tools.infra.ics import IcsEvent
from tools.storage.database import Connection, fetch_one
from tools.storage.visibility import EVERYONE, Audience, visible_to

MAX_LISTED = 200
MAX_FEED = 2_000
_COLUMNS = (
    "e.id, e.member_id, e.created_by, e.uid, e.title, e.starts_at, e.ends_at, e.all_day, e.timezone, e.rrule, "
    "e.source, e.status, e.sequence, e.updated_at, e.visibility, e.hidden_from, e.updated_by, "
    "u.name AS member_name, cr.name AS creator, ed.name AS editor"
)
_JOINS = (
    "LEFT JOIN users u ON u.id = e.member_id LEFT JOIN users cr ON cr.id = e.created_by "
    "LEFT JOIN users ed ON ed.id = e.updated_by"
)
_FROM = f"events e {_JOINS}"


async def insert(
    conn: Connection,
    *,
    household_id: int,
    member_id: int | None,
    created_by: int | None,
    uid: str,
    title: str,
    starts_at: datetime,
    ends_at: datetime | None,
    all_day: bool,
    timezone: str,
    rrule: str | None,
    source: str,
    source_inbox_id: int | None,
    audience: Audience = EVERYONE,
) -> asyncpg.Record:
    return await fetch_one(
        conn,
        f"""WITH e AS (
                INSERT INTO events (household_id, member_id, created_by, uid, title, starts_at, ends_at, all_day,
                                    timezone, rrule, source, source_inbox_id, visibility, hidden_from)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *)
            SELECT {_COLUMNS} FROM e {_JOINS}""",
        household_id,
        member_id,
        created_by,
        uid,
        title,
        starts_at,
        ends_at,
        all_day,
        timezone,
        rrule,
        source,
        source_inbox_id,
        audience.visibility,
        audience.hidden_from,
    )


async def upsert(
    conn: Connection,
    *,
    household_id: int,
    member_id: int | None,
    created_by: int,
    event: IcsEvent,
    audience: Audience = EVERYONE,
) -> str:
    """Store an imported event by its UID: "created", "updated" (its linked reminders moved with it),
    "unchanged" (the same UID with nothing new, e.g. the same file imported twice) or "kept": the UID is another
    member's event (or one this member may not see), which an import never rewrites."""
    created = await conn.fetchval(
        """INSERT INTO events (household_id, member_id, created_by, uid, title, starts_at, ends_at, all_day, timezone,
                               rrule, source, status, sequence, visibility, hidden_from)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'ics', $11, $12, $13, $14)
           ON CONFLICT (household_id, uid) DO NOTHING RETURNING id""",
        household_id,
        member_id,
        created_by,
        event.uid,
        event.title,
        event.starts_at,
        event.ends_at,
        event.all_day,
        event.timezone,
        event.rrule,
        "cancelled" if event.cancelled else "confirmed",
        event.sequence,
        audience.visibility,
        audience.hidden_from,
    )
    if created is not None:
        return "created"
    # The UID is taken. Row-level security hides the row when another member keeps it private: then, as when it is
    # another member's, it stays as it is.
    existing = await conn.fetchrow(
        "SELECT id, created_by FROM events WHERE household_id = $1 AND uid = $2 FOR UPDATE", household_id, event.uid
    )
    if existing is None or existing["created_by"] != created_by:
        return "kept"
    updated = await conn.fetchval(
        """UPDATE events SET title = $3, starts_at = $4, ends_at = $5, all_day = $6, timezone = $7, rrule = $8,
                  status = $9, sequence = greatest(sequence + 1, $10), updated_at = now(), updated_by = $11
           WHERE household_id = $1 AND id = $2
             AND (title, starts_at, ends_at, all_day, timezone, rrule, status)
                 IS DISTINCT FROM ($3, $4, $5, $6, $7, $8, $9)
           RETURNING id""",
        household_id,
        existing["id"],
        event.title,
        event.starts_at,
        event.ends_at,
        event.all_day,
        event.timezone,
        event.rrule,
        "cancelled" if event.cancelled else "confirmed",
        event.sequence,
        created_by,
    )
    if updated is None:
        return "unchanged"
    await follow(conn, household_id, int(existing["id"]), by=created_by)
    return "updated"


async def get(conn: Connection, household_id: int, event_id: int, *, lock: bool = False) -> asyncpg.Record | None:
    return await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM {_FROM} WHERE e.household_id = $1 AND e.id = $2"
        + (" FOR UPDATE OF e" if lock else ""),
        household_id,
        event_id,
    )


async def between(
    conn: Connection, household_id: int, start: datetime, end: datetime, *, member_id: int | None = None
) -> list[asyncpg.Record]:
    """Confirmed events that may fall in [start, end): those starting in it, those still running at its start, and
    repeating ones that began before its end (their occurrences are worked out by the caller). With `member_id`,
    that member's and the household's events only."""
    return await conn.fetch(
        f"""SELECT {_COLUMNS} FROM {_FROM}
            WHERE e.household_id = $1 AND e.status = 'confirmed' AND e.starts_at < $3
              AND (e.starts_at >= $2 OR coalesce(e.ends_at, e.starts_at) > $2 OR e.rrule IS NOT NULL)
              AND ($4::bigint IS NULL OR e.member_id IS NULL OR e.member_id = $4)
            ORDER BY e.starts_at, e.id LIMIT $5""",
        household_id,
        start,
        end,
        member_id,
        MAX_LISTED,
    )


async def feed(conn: Connection, household_id: int, member_id: int | None) -> list[asyncpg.Record]:
    """What a calendar feed shows, newest first: with `member_id`, that member's and the household's events as the
    member may see them (their private ones included); without, the household's events every member may see.
    Cancelled ones too, so subscribed calendars drop them."""
    return await conn.fetch(
        f"""SELECT {_COLUMNS} FROM {_FROM}
            WHERE e.household_id = $1 AND ($2::bigint IS NULL OR e.member_id IS NULL OR e.member_id = $2)
              AND {visible_to("e", "events", "$2")}
            ORDER BY e.starts_at DESC, e.id LIMIT $3""",
        household_id,
        member_id,
        MAX_FEED,
    )


async def move(
    conn: Connection, household_id: int, event_id: int, starts_at: datetime, ends_at: datetime | None, *, by: int
) -> asyncpg.Record:
    await conn.execute(
        """UPDATE events SET starts_at = $3, ends_at = $4, sequence = sequence + 1, updated_at = now(), updated_by = $5
           WHERE household_id = $1 AND id = $2""",
        household_id,
        event_id,
        starts_at,
        ends_at,
        by,
    )
    await follow(conn, household_id, event_id, by=by)
    row = await get(conn, household_id, event_id)
    assert row is not None  # the caller holds it locked
    return row


async def cancel(conn: Connection, household_id: int, event_id: int, *, by: int) -> None:
    """Cancel an event and the reminders that hang off it."""
    await conn.execute(
        """UPDATE events SET status = 'cancelled', sequence = sequence + 1, updated_at = now(), updated_by = $3
           WHERE household_id = $1 AND id = $2""",
        household_id,
        event_id,
        by,
    )
    await follow(conn, household_id, event_id, by=by)


async def restore(conn: Connection, household_id: int, event_id: int, *, by: int | None) -> None:
    """A cancelled event back in the calendar (its reminders stay cancelled: they may have been due meanwhile)."""
    await conn.execute(
        """UPDATE events SET status = 'confirmed', sequence = sequence + 1, updated_at = now(), updated_by = $3
           WHERE household_id = $1 AND id = $2""",
        household_id,
        event_id,
        by,
    )


async def set_editor(conn: Connection, household_id: int, event_id: int, by: int | None) -> None:
    """Who changed the event last (undo puts back who it was before the change it takes back)."""
    await conn.execute(
        "UPDATE events SET updated_by = $3 WHERE household_id = $1 AND id = $2", household_id, event_id, by
    )


async def follow(conn: Connection, household_id: int, event_id: int, *, by: int | None) -> None:
    """Keep the active reminders of an event at `minutes_before` its start: moved with it, cancelled with it —
    every member's, those the mover may not see included (through the `faa_follow_event` door)."""
    await conn.execute("SELECT faa_follow_event($1, $2, $3)", household_id, event_id, by)


async def link_reminder(conn: Connection, household_id: int, reminder_id: int, event_id: int, minutes: int) -> None:
    await conn.execute(
        "UPDATE reminders SET event_id = $3, minutes_before = $4 WHERE household_id = $1 AND id = $2",
        household_id,
        reminder_id,
        event_id,
        minutes,
    )


def as_ics(row: Any) -> IcsEvent:
    return IcsEvent(
        uid=row["uid"],
        title=row["title"],
        starts_at=row["starts_at"],
        ends_at=row["ends_at"],
        all_day=row["all_day"],
        timezone=row["timezone"],
        rrule=row["rrule"],
        cancelled=row["status"] == "cancelled",
        sequence=row["sequence"],
    )
