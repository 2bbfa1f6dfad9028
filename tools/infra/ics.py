"""iCalendar (RFC 5545) files, written and read with the `icalendar` package: the calendar feeds and exports
(events and reminders as VEVENTs) and imported .ics files (their VEVENTs as plain `IcsEvent`s).

Reading is bounded: a file larger than `MAX_BYTES`, nesting components deeper than `MAX_DEPTH`, with more than
`MAX_COMPONENTS` components, `MAX_PROPERTIES` properties in one component or `MAX_DATES` EXDATE/RDATE dates in one
event is refused by a scan of its lines before the parser sees it (the parser holds the interpreter lock, so a
hostile file would stall the event loop even from a thread), and what the file says is checked (lengths, years)
before anything is stored. Every way a file can fail to be read is an `IcsError` with a reason for the member.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import icalendar

from tools.infra.periods import MAX_YEAR, MIN_YEAR

MAX_BYTES = 2_000_000
MAX_EVENTS = 2_000
MAX_DEPTH = 8  # VCALENDAR > VTIMEZONE > STANDARD and VCALENDAR > VEVENT > VALARM are three
MAX_COMPONENTS = 5 * MAX_EVENTS  # events with their alarms, and the timezones they use
MAX_PROPERTIES = 1_000
MAX_DATES = 1_000
PRODID = "-//FAA family assistant//calendar//EN"
_MAX_TITLE = 300
_MAX_UID = 255
_MAX_RRULE = 300
_FOLD = re.compile(rb"\r?\n[ \t]")
_UNREADABLE = (ValueError, KeyError, IndexError, TypeError, AttributeError, OverflowError)


class IcsError(ValueError):
    """An .ics file that cannot be used; the message says why, for the member."""


@dataclass(frozen=True)
class IcsEvent:
    """One event as FAA keeps it: an aware start (midnight of the day, in `timezone`, when all-day)."""

    uid: str
    title: str
    starts_at: datetime
    ends_at: datetime | None
    all_day: bool
    timezone: str
    rrule: str | None = None
    cancelled: bool = False
    sequence: int = 0


def calendar(name: str, events: Iterable[IcsEvent], *, stamp: datetime) -> bytes:
    """An iCalendar file with these events, each in its own timezone (with the VTIMEZONEs it needs)."""
    cal = icalendar.Calendar()
    cal.add("prodid", PRODID)
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("x-wr-calname", name)
    for item in events:
        cal.add_component(_vevent(item, stamp))
    cal.add_missing_timezones()
    data: bytes = cal.to_ical()
    return data


def _vevent(item: IcsEvent, stamp: datetime) -> icalendar.Event:
    event = icalendar.Event()
    event.add("uid", item.uid)
    event.add("dtstamp", stamp.astimezone(UTC))
    event.add("summary", item.title)
    tz = ZoneInfo(item.timezone)
    if item.all_day:
        first = item.starts_at.astimezone(tz).date()
        last = item.ends_at.astimezone(tz).date() if item.ends_at else first + timedelta(days=1)
        event.add("dtstart", first)
        event.add("dtend", max(last, first + timedelta(days=1)))
    else:
        event.add("dtstart", item.starts_at.astimezone(tz))
        if item.ends_at is not None:
            event.add("dtend", item.ends_at.astimezone(tz))
    if item.rrule:
        event.add("rrule", icalendar.vRecur.from_ical(item.rrule))
    if item.cancelled:
        event.add("status", "CANCELLED")
    event.add("sequence", item.sequence)
    return event


def read(data: bytes, default_timezone: str) -> list[IcsEvent]:
    """The VEVENTs of an .ics file; floating times are read on `default_timezone`'s clock. IcsError when the file
    is not iCalendar, too large, or holds no usable event."""
    if len(data) > MAX_BYTES:
        raise IcsError(f"the calendar file is larger than {MAX_BYTES // 1_000_000} MB")
    _check_shape(data)
    try:
        calendars = icalendar.Calendar.from_ical(data, multiple=True)
    except (*_UNREADABLE, RecursionError) as exc:
        raise IcsError(f"this is not an iCalendar file ({type(exc).__name__})") from None
    found: list[IcsEvent] = []
    for cal in calendars:
        for component in cal.walk("VEVENT"):
            if len(found) >= MAX_EVENTS:
                raise IcsError(f"the calendar file has more than {MAX_EVENTS} events")
            try:
                event = _event(component, default_timezone)
            except _UNREADABLE:
                title = " ".join(str(component.get("summary", "")).split())[:80]
                raise IcsError(
                    f'the event "{title}" has a date or value that cannot be read'
                    if title
                    else "an event in the calendar file has a date or value that cannot be read"
                ) from None
            if event is not None:
                found.append(event)
    if not found:
        raise IcsError("the calendar file has no event with a start time")
    return found


def _check_shape(data: bytes) -> None:
    """Refuse what would make the parser work far beyond the file's size: deep nesting, countless components,
    properties or dates. A scan of the unfolded lines, cheap next to parsing."""
    depth = components = 0
    properties, dates = [0], [0]  # per open component, the outermost level first
    for line in _FOLD.sub(b"", data).splitlines():
        name, _, value = line.partition(b":")
        name = name.split(b";", 1)[0].strip().upper()
        if name == b"BEGIN":
            depth, components = depth + 1, components + 1
            if depth > MAX_DEPTH:
                raise IcsError(f"the calendar file nests components more than {MAX_DEPTH} deep")
            if components > MAX_COMPONENTS:
                raise IcsError(f"the calendar file has more than {MAX_COMPONENTS} components")
            properties.append(0)
            dates.append(0)
        elif name == b"END":
            if depth > 0:
                depth -= 1
                properties.pop()
                dates.pop()
        else:
            properties[-1] += 1
            if properties[-1] > MAX_PROPERTIES:
                raise IcsError(f"an event in the calendar file has more than {MAX_PROPERTIES} properties")
            if name in (b"EXDATE", b"RDATE"):
                dates[-1] += value.count(b",") + 1
                if dates[-1] > MAX_DATES:
                    raise IcsError(f"an event in the calendar file has more than {MAX_DATES} excluded or extra dates")


def _event(component: icalendar.Component, default_timezone: str) -> IcsEvent | None:
    """One VEVENT as an IcsEvent; None when it lacks what an event needs (a UID and a start)."""
    uid = str(component.get("uid", "")).strip()[:_MAX_UID]
    start_prop = component.get("dtstart")
    if not uid or start_prop is None:
        return None
    start = start_prop.dt
    title = " ".join(str(component.get("summary", "")).split())[:_MAX_TITLE] or "(no title)"
    all_day = not isinstance(start, datetime)
    zone = _zone_of(start, default_timezone)
    tz = ZoneInfo(zone)
    starts_at = _instant(start, tz)
    end_prop = component.get("dtend")
    ends_at = None if end_prop is None else _instant(end_prop.dt, tz)
    if ends_at is None and component.get("duration") is not None:
        ends_at = starts_at + component.get("duration").dt
    if ends_at is not None and ends_at < starts_at:
        ends_at = None
    if not (MIN_YEAR <= starts_at.year <= MAX_YEAR):
        return None
    rrule_prop = component.get("rrule")
    rrule = None
    if rrule_prop is not None:
        text = rrule_prop.to_ical().decode()
        rrule = text if len(text) <= _MAX_RRULE else None
    sequence = component.get("sequence", 0)
    return IcsEvent(
        uid=uid,
        title=title,
        starts_at=starts_at,
        ends_at=ends_at,
        all_day=all_day,
        timezone=zone,
        rrule=rrule,
        cancelled=str(component.get("status", "")).upper() == "CANCELLED",
        sequence=int(sequence) if isinstance(sequence, int) else 0,
    )


def _zone_of(start: date | datetime, default_timezone: str) -> str:
    """The IANA zone of a start time: its own when it names one FAA knows, UTC for a UTC time, otherwise the
    member's (floating times and dates, and zones from other systems such as Windows names)."""
    if isinstance(start, datetime) and start.tzinfo is not None:
        key = getattr(start.tzinfo, "key", None) or getattr(start.tzinfo, "zone", None)
        if isinstance(key, str):
            try:
                ZoneInfo(key)
                return key
            except (ZoneInfoNotFoundError, ValueError):
                pass
        if start.utcoffset() == timedelta(0):
            return "UTC"
    return default_timezone


def _instant(moment: date | datetime, tz: ZoneInfo) -> datetime:
    if not isinstance(moment, datetime):
        return datetime(moment.year, moment.month, moment.day, tzinfo=tz)
    if moment.tzinfo is None:
        return moment.replace(tzinfo=tz)
    return moment
