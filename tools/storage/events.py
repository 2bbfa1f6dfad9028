"""The `events` rows of the calendar, and the reminders that hang off them (which move when their event moves)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

from tools.infra.ics import IcsEvent
from tools.storage.database import Connection, fetch_one

MAX_LISTED = 200
MAX_FEED = 2_000
_COLUMNS = (
    "e.id, e.member_id, e.created_by, e.uid, e.title, e.starts_at, e.ends_at, e.all_day, e.timezone, e.rrule, "
    "e.source, e.status, e.sequence, e.updated_at, u.name AS member_name"
)
_FROM = "events e LEFT JOIN users u ON u.id = e.member_id"


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
) -> asyncpg.Record:
    return await fetch_one(
        conn,
        f"""WITH e AS (
                INSERT INTO events (household_id, member_id, created_by, uid, title, starts_at, ends_at, all_day,
                                    timezone, rrule, source, source_inbox_id)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *)
            SELECT {_COLUMNS} FROM e LEFT JOIN users u ON u.id = e.member_id""",
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
    )


async def upsert(
    conn: Connection, *, household_id: int, member_id: int | None, created_by: int, event: IcsEvent
) -> str:
    """Store an imported event by its UID: "created", "updated" (its linked reminders moved with it) or
    "unchanged" (the same UID with nothing new, e.g. the same file imported twice)."""
    row = await conn.fetchrow(
        """INSERT INTO events (household_id, member_id, created_by, uid, title, starts_at, ends_at, all_day, timezone,
                               rrule, source, status, sequence)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'ics', $11, $12)
           ON CONFLICT (household_id, uid) DO UPDATE
               SET title = EXCLUDED.title, starts_at = EXCLUDED.starts_at, ends_at = EXCLUDED.ends_at,
                   all_day = EXCLUDED.all_day, timezone = EXCLUDED.timezone, rrule = EXCLUDED.rrule,
                   status = EXCLUDED.status, sequence = greatest(events.sequence + 1, EXCLUDED.sequence),
                   updated_at = now()
               WHERE (events.title, events.starts_at, events.ends_at, events.all_day, events.timezone, events.rrule,
                      events.status)
                     IS DISTINCT FROM
                     (EXCLUDED.title, EXCLUDED.starts_at, EXCLUDED.ends_at, EXCLUDED.all_day, EXCLUDED.timezone,
                      EXCLUDED.rrule, EXCLUDED.status)
           RETURNING id, (xmax = 0) AS created""",
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
    )
    if row is None:
        return "unchanged"
    if row["created"]:
        return "created"
    await follow(conn, household_id, int(row["id"]))
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
    """What a calendar feed shows, newest first: with `member_id`, that member's and the household's events; without,
    every event of the household. Cancelled ones too, so subscribed calendars drop them."""
    return await conn.fetch(
        f"""SELECT {_COLUMNS} FROM {_FROM}
            WHERE e.household_id = $1 AND ($2::bigint IS NULL OR e.member_id IS NULL OR e.member_id = $2)
            ORDER BY e.starts_at DESC, e.id LIMIT $3""",
        household_id,
        member_id,
        MAX_FEED,
    )


async def move(
    conn: Connection, household_id: int, event_id: int, starts_at: datetime, ends_at: datetime | None
) -> asyncpg.Record:
    await conn.execute(
        """UPDATE events SET starts_at = $3, ends_at = $4, sequence = sequence + 1, updated_at = now()
           WHERE household_id = $1 AND id = $2""",
        household_id,
        event_id,
        starts_at,
        ends_at,
    )
    await follow(conn, household_id, event_id)
    row = await get(conn, household_id, event_id)
    assert row is not None  # the caller holds it locked
    return row


async def cancel(conn: Connection, household_id: int, event_id: int) -> None:
    """Cancel an event and the reminders that hang off it."""
    await conn.execute(
        """UPDATE events SET status = 'cancelled', sequence = sequence + 1, updated_at = now()
           WHERE household_id = $1 AND id = $2""",
        household_id,
        event_id,
    )
    await follow(conn, household_id, event_id)


async def restore(conn: Connection, household_id: int, event_id: int) -> None:
    """A cancelled event back in the calendar (its reminders stay cancelled: they may have been due meanwhile)."""
    await conn.execute(
        """UPDATE events SET status = 'confirmed', sequence = sequence + 1, updated_at = now()
           WHERE household_id = $1 AND id = $2""",
        household_id,
        event_id,
    )


async def follow(conn: Connection, household_id: int, event_id: int) -> None:
    """Keep the active reminders of an event at `minutes_before` its start: moved with it, cancelled with it."""
    await conn.execute(
        """UPDATE reminders r
           SET next_fire_at = CASE WHEN e.status = 'cancelled' THEN NULL
                                   ELSE e.starts_at - make_interval(mins => r.minutes_before) END,
               occurrence_at = CASE WHEN e.status = 'cancelled' THEN r.occurrence_at
                                    ELSE e.starts_at - make_interval(mins => r.minutes_before) END,
               status = CASE WHEN e.status = 'cancelled' THEN 'cancelled' ELSE r.status END,
               updated_at = now()
           FROM events e
           WHERE e.id = r.event_id AND r.household_id = $1 AND r.event_id = $2 AND r.status = 'active'""",
        household_id,
        event_id,
    )


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
