"""Digest schedules, their occurrences in the household's timezone, and the run rows that make each one go out once.

Kinds: `monthly` (the previous month's expenses, on a day of the month), `weekly` (the seven days before a
weekday) and `morning` (today's agenda). A local time that does not exist on a daylight-saving day (the spring
gap) fires at the same wall-clock time on the new offset, an hour later; a time that exists twice (the autumn
fold) fires at its first occurrence.

What a digest says is `engine.digests`; the worker's jobs that send them are `worker.digests`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal, get_args
from zoneinfo import ZoneInfo

from tools.infra.periods import localize
from tools.storage.database import Connection

DigestKind = Literal["monthly", "weekly", "morning"]
KINDS: tuple[str, ...] = get_args(DigestKind)
# A digest this late is no longer worth sending (the worker was down): the next period brings the next one.
GRACE = {"monthly": timedelta(days=3), "weekly": timedelta(days=1), "morning": timedelta(hours=2)}
_DAY = timedelta(days=1)


@dataclass(frozen=True)
class Schedule:
    household_id: int
    kind: str
    timezone: str
    day_of_month: int
    weekday: int  # ISO, 1 = Monday
    at_time: time
    enabled_since: datetime
    enabled: bool = True
    last_period: date | None = None


@dataclass(frozen=True)
class Occurrence:
    """One digest to send: the local dates it covers, [period_start, period_end), and when it was due (UTC)."""

    kind: str
    period_start: date
    period_end: date
    due_at: datetime


def _first_of_previous_month(day: date) -> date:
    return (day.replace(day=1) - _DAY).replace(day=1)


def period_of(kind: str, due_date: date) -> tuple[date, date]:
    """The local dates a digest due on `due_date` covers."""
    if kind == "monthly":
        return _first_of_previous_month(due_date), due_date.replace(day=1)
    if kind == "weekly":
        return due_date - 7 * _DAY, due_date
    if kind == "morning":
        return due_date, due_date + _DAY
    raise ValueError(f"unknown digest kind {kind!r}")


def _due_dates(schedule: Schedule, today: date) -> tuple[date, date]:
    """This period's due date on or before `today`'s calendar position, and the one before it."""
    if schedule.kind == "morning":
        return today, today - _DAY
    if schedule.kind == "weekly":
        latest = today - timedelta(days=(today.isoweekday() - schedule.weekday) % 7)
        return latest, latest - 7 * _DAY
    this_month = today.replace(day=schedule.day_of_month)
    if this_month > today:
        this_month = _first_of_previous_month(today).replace(day=schedule.day_of_month)
    return this_month, _first_of_previous_month(this_month).replace(day=schedule.day_of_month)


def latest_occurrence(schedule: Schedule, now: datetime) -> Occurrence | None:
    """The most recent occurrence due at or before `now`, if it is still worth sending and was not sent."""
    tz = ZoneInfo(schedule.timezone)
    for due_date in _due_dates(schedule, now.astimezone(tz).date()):
        due_at = localize(datetime.combine(due_date, schedule.at_time), tz)
        if due_at <= now:
            break
    else:
        return None
    start, end = period_of(schedule.kind, due_date)
    if due_at < schedule.enabled_since or now - due_at > GRACE[schedule.kind]:
        return None
    if schedule.last_period is not None and schedule.last_period >= start:
        return None
    return Occurrence(schedule.kind, start, end, due_at)


async def due(conn: Connection, now: datetime) -> list[tuple[int, Occurrence]]:
    """(household id, occurrence) of every digest due now and not yet sent, across households."""
    rows = await conn.fetch("SELECT * FROM faa_digest_schedules()")
    found = []
    for row in rows:
        occurrence = latest_occurrence(Schedule(**dict(row)), now)
        if occurrence is not None:
            found.append((int(row["household_id"]), occurrence))
    return found


async def schedules(conn: Connection, household_id: int) -> list[Schedule]:
    """The household's schedule for each kind, defaults filled in."""
    rows = await conn.fetch(
        """SELECT household_id, kind, timezone, enabled, day_of_month, weekday, at_time, enabled_since
           FROM digest_effective_schedules WHERE household_id = $1
           ORDER BY array_position(ARRAY['monthly', 'weekly', 'morning'], kind)""",
        household_id,
    )
    return [Schedule(**dict(row)) for row in rows]


async def configure(
    conn: Connection,
    household_id: int,
    kind: str,
    *,
    enabled: bool | None = None,
    day_of_month: int | None = None,
    weekday: int | None = None,
    at_time: time | None = None,
    now: datetime | None = None,
) -> None:
    """Change what is given and keep the rest. Occurrences before `now` will not fire."""
    if kind not in KINDS:
        raise ValueError(f"unknown digest kind {kind!r}; use one of {', '.join(KINDS)}")
    if day_of_month is not None and not 1 <= day_of_month <= 28:
        raise ValueError("the day of the month must be 1 to 28, so that every month has it")
    if weekday is not None and not 1 <= weekday <= 7:
        raise ValueError("the weekday must be 1 (Monday) to 7 (Sunday)")
    await conn.execute(
        """INSERT INTO digest_schedules AS s
               (household_id, kind, enabled, day_of_month, weekday, at_time, enabled_since, updated_at)
           SELECT e.household_id, e.kind, coalesce($3, e.enabled), coalesce($4, e.day_of_month),
                  coalesce($5, e.weekday), coalesce($6, e.at_time), $7, $7
           FROM digest_effective_schedules e WHERE e.household_id = $1 AND e.kind = $2
           ON CONFLICT (household_id, kind) DO UPDATE SET
               enabled = excluded.enabled, day_of_month = excluded.day_of_month, weekday = excluded.weekday,
               at_time = excluded.at_time, enabled_since = excluded.enabled_since, updated_at = excluded.updated_at""",
        household_id,
        kind,
        enabled,
        day_of_month,
        weekday,
        at_time,
        now or datetime.now(UTC),
    )


async def already_sent(conn: Connection, household_id: int, kind: str, period_start: date) -> bool:
    return bool(
        await conn.fetchval(
            "SELECT EXISTS (SELECT 1 FROM digest_runs WHERE household_id = $1 AND kind = $2 AND period_start = $3)",
            household_id,
            kind,
            period_start,
        )
    )


async def claim(
    conn: Connection, household_id: int, occurrence: Occurrence, *, phrasing: str, facts: dict[str, Any]
) -> int | None:
    """Record the run and return its id; `None` when another worker already did, and then this transaction must
    write nothing else. A concurrent claim of the same period waits on the unique index until the first commits."""
    run_id = await conn.fetchval(
        """INSERT INTO digest_runs (household_id, kind, period_start, period_end, due_at, phrasing, facts)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (household_id, kind, period_start) DO NOTHING RETURNING id""",
        household_id,
        occurrence.kind,
        occurrence.period_start,
        occurrence.period_end,
        occurrence.due_at,
        phrasing,
        facts,
    )
    return None if run_id is None else int(run_id)


async def attach_media(conn: Connection, run_id: int, media_ids: list[int]) -> None:
    await conn.execute("UPDATE digest_runs SET media_ids = $2 WHERE id = $1", run_id, media_ids)
