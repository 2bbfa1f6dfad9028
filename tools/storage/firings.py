"""Firing reminders: one outbox row per recipient and the reminder advanced, in the caller's one transaction.

Exactly once: the reminder row is locked and re-checked (`active`, due, and — for a job — still the occurrence
the job was made for). A second worker, or the sweeper racing a job, either waits on the lock and then finds the
reminder already advanced, or skips it; the `reminder_firings` key (reminder, fire_at) backs that up.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from tools.errors import RecurrenceError
from tools.infra.recurrence import next_occurrence, parse_rule, quiet_until, wall_time
from tools.storage import outbox
from tools.storage.database import Connection
from tools.storage.identities import delivery_address

REMINDER_OPTIONS = ("Snooze 15 min", "Done")

_SELECT = """SELECT id, household_id, created_by, recipient_ids, for_household, text, timezone, rrule,
                    next_fire_at, occurrence_at, dtstart_local, hidden_from
             FROM reminders WHERE id = $1 AND status = 'active' AND next_fire_at <= $2"""


@dataclass(frozen=True)
class Due:
    reminder_id: int
    household_id: int
    fire_at: datetime


@dataclass(frozen=True)
class Delivery:
    outbox_id: int
    not_before: datetime | None  # None: deliver now; else the end of the recipient's quiet hours


@dataclass(frozen=True)
class Fired:
    reminder_id: int
    household_id: int
    fire_at: datetime
    deliveries: tuple[Delivery, ...]
    next_fire_at: datetime | None


@dataclass(frozen=True)
class FiredNote:
    """A reminder recently sent to a member, for the engine's context ("snooze", "done")."""

    reminder_id: int
    text: str
    fired_at: datetime
    repeating: bool
    status: str
    acknowledged: bool


async def due(conn: Connection, until: datetime, limit: int = 500) -> list[Due]:
    """Active reminders due up to `until`, across households (run unscoped), earliest first."""
    rows = await conn.fetch("SELECT id, household_id, next_fire_at FROM faa_due_reminders($1, $2)", until, limit)
    return [Due(int(r["id"]), int(r["household_id"]), r["next_fire_at"]) for r in rows]


async def changed_by_message(conn: Connection, inbox_id: int) -> list[Due]:
    """Active reminders that one message scheduled or snoozed: their jobs are enqueued once it committed. The
    transaction acts from here on for the message's member, whose private reminders are among them."""
    await conn.execute(
        "SELECT set_config('app.user_id', coalesce((SELECT user_id::text FROM inbox WHERE id = $1), ''), true)",
        inbox_id,
    )
    rows = await conn.fetch(
        "SELECT id, household_id, next_fire_at FROM reminders WHERE changed_by_inbox_id = $1 AND status = 'active'",
        inbox_id,
    )
    return [Due(int(r["id"]), int(r["household_id"]), r["next_fire_at"]) for r in rows]


async def fire(
    conn: Connection, reminder_id: int, *, now: datetime, fire_at: datetime | None = None, skip_locked: bool = False
) -> Fired | None:
    """Fire the reminder if it is due at `now` (and, given `fire_at`, still due for that time); None otherwise.

    Call inside a household transaction; the outbox rows and the advance commit together with the caller, which
    from here on acts for the reminder's author (who may see it, whether it is private or not).
    """
    await conn.execute(
        "SELECT set_config('app.user_id', coalesce(faa_reminder_author(faa_household(), $1)::text, ''), true)",
        reminder_id,
    )
    sql = _SELECT + (" AND next_fire_at = $3" if fire_at is not None else "")
    sql += " FOR UPDATE SKIP LOCKED" if skip_locked else " FOR UPDATE"
    row = await conn.fetchrow(sql, reminder_id, now, *([fire_at] if fire_at is not None else []))
    if row is None:
        return None
    fired_at = row["next_fire_at"]
    members = await _members(conn, row["household_id"])
    recipients = _recipients(row, members)
    recorded = await conn.fetchval(
        """INSERT INTO reminder_firings (household_id, reminder_id, fire_at, occurrence_at, fired_at, recipient_ids)
           VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING true""",
        row["household_id"],
        reminder_id,
        fired_at,
        row["occurrence_at"] or fired_at,
        now,
        [int(r["id"]) for r in recipients],
    )
    deliveries = []
    if recorded:
        creator = next((m for m in members if m["id"] == row["created_by"]), None)
        for member in recipients:
            deliveries.append(await _queue(conn, row, member, creator, now))
    # Off the event loop: walking a rule's calendar takes up to some tens of milliseconds.
    next_fire = await asyncio.to_thread(_next, row, now)
    await conn.execute(
        """UPDATE reminders SET next_fire_at = $2, occurrence_at = $2, last_fired_at = $3, updated_at = now(),
                  status = CASE WHEN $2::timestamptz IS NULL THEN 'done' ELSE 'active' END
           WHERE id = $1""",
        reminder_id,
        next_fire,
        now,
    )
    return Fired(reminder_id, int(row["household_id"]), fired_at, tuple(deliveries), next_fire)


def _next(row: Any, now: datetime) -> datetime | None:
    """The next regular occurrence after both the fired one and now: a worker that was down for a while sends
    one reminder for the missed occurrences, not one per occurrence."""
    if row["rrule"] is None:
        return None
    return next_regular(
        row["rrule"], row["dtstart_local"], row["timezone"], max(row["occurrence_at"] or row["next_fire_at"], now)
    )


def next_regular(rrule: str, dtstart_local: datetime, timezone: str, after: datetime) -> datetime | None:
    """The stored rule's next occurrence after `after`, None when the series is over. CPU work that can take tens
    of milliseconds: call it in a thread from async code."""
    tz = ZoneInfo(timezone)
    try:
        return next_occurrence(parse_rule(rrule, dtstart_local, tz), tz, after)
    except RecurrenceError:
        return None  # validated when scheduled; a rule that cannot go on ends the series visibly (done)


async def _members(conn: Connection, household_id: int) -> list[Any]:
    return list(
        await conn.fetch(
            """SELECT id, name, timezone, quiet_start, quiet_end, forgotten_at IS NOT NULL AS forgotten FROM users
               WHERE household_id = $1 ORDER BY id""",
            household_id,
        )
    )


def _recipients(row: Any, members: list[Any]) -> list[Any]:
    """Who is reminded: never a member who was forgotten since, nor the member the reminder is kept from."""
    present = [m for m in members if not m["forgotten"] and m["id"] != row["hidden_from"]]
    if row["for_household"]:
        return present
    wanted = set(row["recipient_ids"])
    return [m for m in present if m["id"] in wanted]


async def _queue(conn: Connection, row: Any, member: Any, creator: Any, now: datetime) -> Delivery:
    member_tz = ZoneInfo(member["timezone"])
    not_before = None
    if member["quiet_start"] is not None:
        not_before = quiet_until(now, member_tz, member["quiet_start"], member["quiet_end"])
    text = f"⏰ Reminder: {row['text']}"
    if creator is not None and creator["id"] != member["id"]:
        text += f" (from {creator['name']})"
    if not_before is not None:
        text += f" — due {wall_time(row['next_fire_at'], member_tz):%H:%M}, held back during your quiet hours"
    address = await delivery_address(conn, int(member["id"]))
    outbox_id = await outbox.add(
        conn,
        household_id=int(row["household_id"]),
        user_id=int(member["id"]),
        channel=address.channel,
        recipient=address.recipient,
        text=text,
        payload={
            "kind": "reminder",
            "reminder_id": int(row["id"]),
            "fire_at": row["next_fire_at"].isoformat(),
            "options": list(REMINDER_OPTIONS),
        },
        not_before=not_before,
    )
    assert outbox_id is not None  # only replies to an inbox message can conflict
    return Delivery(outbox_id, not_before)


async def recently_fired(conn: Connection, user_id: int, since: datetime, limit: int = 5) -> list[FiredNote]:
    """Reminders sent to the member since `since`, newest first, one line per reminder."""
    rows = await conn.fetch(
        """SELECT DISTINCT ON (f.reminder_id) f.reminder_id, r.text, f.fired_at, r.rrule IS NOT NULL AS repeating,
                  r.status, f.acknowledged_at IS NOT NULL AS acknowledged
           FROM reminder_firings f JOIN reminders r ON r.id = f.reminder_id
           WHERE $1 = ANY(f.recipient_ids) AND f.fired_at >= $2
           ORDER BY f.reminder_id, f.fired_at DESC""",
        user_id,
        since,
    )
    notes = [FiredNote(**{**dict(r), "reminder_id": int(r["reminder_id"])}) for r in rows]
    return sorted(notes, key=lambda n: n.fired_at, reverse=True)[:limit]
