"""The calendar tools: add_event, list_events, move_event, cancel_event and remind_before_event, over the rows of
`tools.storage.events`. Importing .ics files is `import_events` (not a model tool: a file is no model output).

An event keeps the timezone its time was given in; a repeating one takes an RFC 5545 RRULE, checked like a
reminder's. A date without a time is an all-day event.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from tools.audience import HiddenFromArg, VisibilityArg, audience, shown_audience
from tools.context import ToolContext
from tools.errors import RecurrenceError, RowNotFound, ToolRetry
from tools.fields import Moment, RowId
from tools.infra.ics import IcsEvent
from tools.infra.periods import check_year
from tools.infra.recurrence import occurrences, parse_rule, resolve_wall_time, wall_time
from tools.permissions import check_change
from tools.reminders import ScheduleReminderArgs, schedule_reminder
from tools.storage import events as stored
from tools.storage.visibility import EVERYONE, Audience

_SELF = frozenset({"self", "me", "myself"})
_HOUSEHOLD = frozenset({"household", "everyone", "all", "family", "all of us"})
_RULE_TIMEOUT_S = 2.0
_MAX_OCCURRENCES = 60
_MAX_LENGTH = timedelta(days=366)

Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)]
Whose = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
Rule = Annotated[str, StringConstraints(strip_whitespace=True, max_length=300)]


class AddEventArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: Title = Field(description="what happens, short, e.g. 'Dentist' or 'Tom: football'")
    start: Moment = Field(description="start date-time (a date alone makes an all-day event), member's clock")
    end: Moment | None = Field(None, description="end, same form as start; omit when not said")
    rrule: Rule | None = Field(None, description="repeat rule, RFC 5545 RRULE, e.g. FREQ=WEEKLY;BYDAY=TU")
    whose: Whose = Field("self", description='"self", "household" (everyone) or a member\'s name')
    visibility: VisibilityArg = "household"
    hidden_from: HiddenFromArg = None


class ListEventsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    start: Annotated[date, AfterValidator(check_year)] | None = Field(
        None, description="first day, ISO date; default today"
    )
    days: int = Field(7, ge=1, le=366, description="how many days from start")
    limit: int = Field(30, ge=1, le=stored.MAX_LISTED, description="at most this many, the earliest first")


class EventIdArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event_id: RowId


class MoveEventArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event_id: RowId
    start: Moment = Field(description="the new start, member's clock")
    end: Moment | None = Field(None, description="the new end; omit to keep the event's length")


class RemindBeforeEventArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event_id: RowId
    minutes_before: int = Field(60, ge=0, le=28 * 24 * 60, description="how long before the start, in minutes")
    recipient: Whose = Field("self", description='"self", "household" or a member\'s name')


class Event(BaseModel):
    event_id: int
    title: str
    start: str = Field(description="on the event's clock; a date for all-day events")
    end: str | None = None
    all_day: bool = False
    timezone: str
    rrule: str | None = None
    whose: str = Field(description="a member's name, or 'household'")
    source: str
    status: str = "confirmed"
    visibility: str = "household"
    hidden_from: str | None = Field(None, description="the member it is kept from (a surprise for them)")
    author: str | None = Field(None, description="the member who put it in the calendar")
    edited_by: str | None = Field(None, description="the member who changed it last, when not its author")


class EventList(BaseModel):
    count: int
    events: list[Event]
    more: bool = Field(False, description="true when more events fall in the days than were listed")
    start: str
    end: str


class ChangedEvent(Event):
    previous: dict[str, Any] = Field({}, description="the event before this change")


class EventReminder(BaseModel):
    reminder_id: int
    event_id: int
    text: str
    next_at: str | None
    minutes_before: int


def _shown(instant: datetime | None, zone: str, all_day: bool) -> str | None:
    if instant is None:
        return None
    local = instant.astimezone(ZoneInfo(zone))
    return local.date().isoformat() if all_day else local.isoformat(timespec="minutes")


def event(row: Any, start: datetime | None = None, *, hidden_from: str | None = None) -> Event:
    """A row as the model and the pages read it; `start` is the occurrence to show (for repeating events)."""
    starts_at = start or row["starts_at"]
    ends_at = row["ends_at"]
    if start is not None and ends_at is not None:
        ends_at = start + (row["ends_at"] - row["starts_at"])
    edited = row["updated_by"] is not None and row["updated_by"] != row["created_by"]
    return Event(
        event_id=row["id"],
        title=row["title"],
        start=_shown(starts_at, row["timezone"], row["all_day"]) or "",
        end=_shown(ends_at, row["timezone"], row["all_day"]),
        all_day=row["all_day"],
        timezone=row["timezone"],
        rrule=row["rrule"],
        whose=row["member_name"] or "household",
        source=row["source"],
        status=row["status"],
        visibility=row["visibility"],
        hidden_from=hidden_from,
        author=row["creator"],
        edited_by=row["editor"] if edited else None,
    )


async def _event_of(ctx: ToolContext, row: Any, start: datetime | None = None) -> Event:
    hidden = (await shown_audience(ctx, row))["hidden_from"] if row["hidden_from"] is not None else None
    return event(row, start, hidden_from=hidden)


def _whose(ctx: ToolContext, tool: str, whose: str) -> int | None:
    """The member an event or reminder is for, None for the household."""
    wanted = whose.strip().lower()
    if wanted in _SELF:
        return ctx.user_id
    if wanted in _HOUSEHOLD:
        return None
    for member in ctx.members:
        if member.name.lower() == wanted:
            return member.id
    names = ", ".join(sorted(m.name for m in ctx.members))
    raise ToolRetry(tool, f"no member named {whose!r}; use 'self', 'household' or one of the members: {names}")


def _instant(moment: date | datetime, tz: ZoneInfo) -> datetime:
    if not isinstance(moment, datetime):
        return datetime(moment.year, moment.month, moment.day, tzinfo=tz)
    if moment.tzinfo is None:
        return resolve_wall_time(moment.replace(second=0, microsecond=0), tz)
    return moment.astimezone(UTC)


def _span(
    tool: str, start: date | datetime, end: date | datetime | None, tz: ZoneInfo
) -> tuple[datetime, datetime | None]:
    starts_at = _instant(start, tz)
    ends_at = None if end is None else _instant(end, tz)
    if ends_at is not None and not isinstance(end, datetime) and not isinstance(start, datetime):
        ends_at += timedelta(days=1)  # an all-day event's last day is included
    if ends_at is not None and not starts_at <= ends_at <= starts_at + _MAX_LENGTH:
        raise ToolRetry(tool, "end must come after start, and within a year of it")
    return starts_at, ends_at


async def _bounded(tool: str, work: Any) -> Any:
    try:
        return await asyncio.wait_for(asyncio.to_thread(work), _RULE_TIMEOUT_S)
    except TimeoutError:
        raise ToolRetry(tool, "the repeat rule takes too long to work out; give a simpler RRULE") from None
    except RecurrenceError as exc:
        raise ToolRetry(tool, str(exc)) from None


async def add_event(ctx: ToolContext, args: AddEventArgs) -> Event:
    """Put an event in the family calendar: an appointment, a plan with a time ("dentist on Friday at 3pm" →
    title "Dentist", start 2026-03-13T15:00). A date without a time makes an all-day event. `whose` is the member
    it is for ("self" by default) or "household" for everyone. Repeating events take an RRULE
    ("every Tuesday" → FREQ=WEEKLY;BYDAY=TU). `visibility: "private"` keeps it to the member who says so ("only
    for me"); `hidden_from` keeps it from one member ("a surprise for Sam"). Returns the event_id (for move_event,
    cancel_event and remind_before_event)."""
    kept = await audience(ctx, "add_event", args.visibility, args.hidden_from)
    member_id = _whose(ctx, "add_event", args.whose)
    if kept.hidden_from is not None and kept.hidden_from == member_id:
        raise ToolRetry(
            "add_event",
            "the event is for the member it would be kept from; keep it from someone else",
            for_member="This event is for that member, so it cannot be kept from them.",
        )
    tz = ZoneInfo(ctx.timezone)
    starts_at, ends_at = _span("add_event", args.start, args.end, tz)
    rrule = args.rrule.removeprefix("RRULE:").strip() if args.rrule else None
    if rrule:
        local = wall_time(starts_at, tz)
        await _bounded("add_event", lambda: parse_rule(rrule, local, tz))
    row = await stored.insert(
        ctx.conn,
        household_id=ctx.household_id,
        member_id=member_id,
        created_by=ctx.user_id,
        uid=f"{uuid.uuid4()}@faa",
        title=args.title,
        starts_at=starts_at,
        ends_at=ends_at,
        all_day=not isinstance(args.start, datetime),
        timezone=ctx.timezone,
        rrule=rrule,
        source="chat",
        source_inbox_id=ctx.inbox_id,
        audience=kept,
    )
    return await _event_of(ctx, row)


async def list_events(ctx: ToolContext, args: ListEventsArgs) -> EventList:
    """The calendar's events in a stretch of days ("what's on this week?"): from `start` (default today, on the
    member's clock) for `days` days, each repeating event once per occurrence, in time order."""
    tz = ZoneInfo(ctx.timezone)
    first = args.start or ctx.now.astimezone(tz).date()
    start = datetime(first.year, first.month, first.day, tzinfo=tz)
    end = start + timedelta(days=args.days)
    found = await upcoming(ctx, start, end, limit=args.limit + 1)  # one more says whether there are more
    listed = found[: args.limit]
    return EventList(
        more=len(found) > len(listed),
        count=len(listed),
        events=listed,
        start=first.isoformat(),
        end=(end - timedelta(days=1)).date().isoformat(),
    )


async def upcoming(
    ctx: ToolContext, start: datetime, end: datetime, *, member_id: int | None = None, limit: int = stored.MAX_LISTED
) -> list[Event]:
    """The first `limit` events in [start, end), one per occurrence, in time order."""
    rows = await stored.between(ctx.conn, ctx.household_id, start, end, member_id=member_id)
    found: list[tuple[datetime, int, datetime | None]] = []  # (start, row, occurrence of a repeating event)
    for index, row in enumerate(rows):
        if row["rrule"] is None:
            found.append((row["starts_at"], index, None))
            continue
        for at in await asyncio.to_thread(_occurrences, row, start, end, limit):
            found.append((at, index, at))
    found.sort(key=lambda item: (item[0], item[1]))
    return [await _event_of(ctx, rows[index], at) for _, index, at in found[:limit]]


def _occurrences(row: Any, start: datetime, end: datetime, limit: int) -> list[datetime]:
    """A repeating event's starts in [start, end); only its first when its rule cannot be worked out (an imported
    rule FAA's checks refuse)."""
    tz = ZoneInfo(row["timezone"])
    try:
        rule = parse_rule(row["rrule"], wall_time(row["starts_at"], tz), tz)
        times = itertools.takewhile(lambda t: t < end, occurrences(rule, tz, start, inclusive=True))
        return list(itertools.islice(times, min(limit, _MAX_OCCURRENCES)))
    except RecurrenceError:
        return [row["starts_at"]] if start <= row["starts_at"] < end else []


async def _locked(ctx: ToolContext, tool: str, event_id: int, *, changes: bool = True) -> Any:
    """The event, locked; refused when it is gone or cancelled, or (`changes`) the member may not change it."""
    row = await stored.get(ctx.conn, ctx.household_id, event_id, lock=True)
    if row is None:
        raise RowNotFound(tool, f"there is no event {event_id}; list_events shows the event_ids")
    if row["status"] == "cancelled":
        raise RowNotFound(tool, f"event {event_id} was cancelled", for_member="That event was cancelled.")
    if changes:
        await check_change(ctx, tool, f"event {event_id}", row["created_by"])
    return row


async def move_event(ctx: ToolContext, args: MoveEventArgs) -> ChangedEvent:
    """Move an event to a new time ("the dentist is at 4pm now"); reminders set for it move with it. Without
    `end` the event keeps its length."""
    row = await _locked(ctx, "move_event", args.event_id)
    tz = ZoneInfo(ctx.timezone)
    starts_at, ends_at = _span("move_event", args.start, args.end, tz)
    if args.end is None and row["ends_at"] is not None:
        ends_at = starts_at + (row["ends_at"] - row["starts_at"])
    moved = await stored.move(ctx.conn, ctx.household_id, args.event_id, starts_at, ends_at, by=ctx.user_id)
    before = event(row)
    previous = {
        "start": before.start,
        "end": before.end,
        "starts_at": row["starts_at"].isoformat(),
        "ends_at": None if row["ends_at"] is None else row["ends_at"].isoformat(),
        "updated_by": row["updated_by"],
    }
    return ChangedEvent(**(await _event_of(ctx, moved)).model_dump(), previous=previous)


async def cancel_event(ctx: ToolContext, args: EventIdArgs) -> ChangedEvent:
    """Cancel an event (it leaves the calendar and the subscribed phone calendars); reminders set for it are
    cancelled too."""
    row = await _locked(ctx, "cancel_event", args.event_id)
    await stored.cancel(ctx.conn, ctx.household_id, args.event_id, by=ctx.user_id)
    cancelled = await stored.get(ctx.conn, ctx.household_id, args.event_id)
    previous = {"status": row["status"], "updated_by": row["updated_by"]}
    return ChangedEvent(**(await _event_of(ctx, cancelled or row)).model_dump(), previous=previous)


async def remind_before_event(ctx: ToolContext, args: RemindBeforeEventArgs) -> EventReminder:
    """Remind before an event ("remind me an hour before the dentist" → minutes_before 60): the reminder moves
    when the event moves and is cancelled with it."""
    row = await _locked(ctx, "remind_before_event", args.event_id, changes=False)
    if row["rrule"] is not None:
        raise ToolRetry("remind_before_event", "the event repeats; use schedule_reminder with the same RRULE instead")
    at = row["starts_at"] - timedelta(minutes=args.minutes_before)
    if row["all_day"] and args.minutes_before == 0:
        at = row["starts_at"] + timedelta(hours=8)  # the morning of the day, not midnight
    # The reminder says the event's title: whoever may not see the event may not see the reminder either.
    kept_from = (await shown_audience(ctx, row))["hidden_from"]
    scheduled = await schedule_reminder(
        ctx,
        ScheduleReminderArgs(
            text=row["title"],
            when=at,
            rrule=None,
            recipient=args.recipient,
            timezone_of="me",
            visibility=row["visibility"],
            hidden_from=kept_from,
        ),
    )
    await stored.link_reminder(ctx.conn, ctx.household_id, scheduled.reminder_id, args.event_id, args.minutes_before)
    return EventReminder(
        reminder_id=scheduled.reminder_id,
        event_id=args.event_id,
        text=scheduled.text,
        next_at=scheduled.next_at,
        minutes_before=args.minutes_before,
    )


class Imported(BaseModel):
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    kept: int = Field(
        default=0, description="events of the file that are another member's in the calendar: not rewritten"
    )
    titles: list[str] = []


async def import_events(
    ctx: ToolContext, found: list[IcsEvent], whose: Literal["self", "household"], kept: Audience = EVERYONE
) -> Imported:
    """Store the events of an .ics file by UID: a second import of the same file changes nothing, a newer version
    of an event the member imported before updates it (and moves its reminders), and an event another member has
    in the calendar under the same UID stays as it is. New events get the audience `kept`."""
    member_id = ctx.user_id if whose == "self" else None
    result = Imported()
    for item in found:
        outcome = await stored.upsert(
            ctx.conn,
            household_id=ctx.household_id,
            member_id=member_id,
            created_by=ctx.user_id,
            event=item,
            audience=kept,
        )
        setattr(result, outcome, getattr(result, outcome) + 1)
        if outcome in ("created", "updated") and len(result.titles) < 10:
            result.titles.append(item.title)
    return result
