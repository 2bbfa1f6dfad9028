"""The calendar page: the coming weeks' events (added and cancelled through the event tools), .ics upload, and the
signed feed URLs a phone calendar subscribes to (the household's and the member's own; adults can revoke them all
by rotating the household's secret). The feed itself, `GET /ics/<token>.ics`, needs no session: its token is its
key."""

from __future__ import annotations

import asyncio
import calendar as months
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

import structlog
from aiohttp import web
from pydantic import ValidationError

from bot.web.pages.render import VIEWER, html, redirect
from bot.web.pages.security import DEPS
from bot.web.pages.tooling import (
    audience_fields,
    invalid,
    json_body,
    json_tool,
    member_tools,
    refusal,
    row_id,
)
from tools.audience import audience
from tools.errors import ToolRetry
from tools.events import (
    AddEventArgs,
    Event,
    EventIdArgs,
    ListEventsArgs,
    MoveEventArgs,
    add_event,
    cancel_event,
    import_events,
    list_events,
    move_event,
)
from tools.infra import ics
from tools.storage import events as stored
from tools.storage import feeds, households
from tools.storage.events import MAX_LISTED

log = structlog.get_logger()

DAYS_SHOWN = 31
VIEWS = ("list", "week", "month")


@dataclass(frozen=True)
class Shown:
    """An event as the member reads it: its day and times on the member's clock (an event imported at 17:00 UTC
    is at 18:00 for a member in Berlin), whatever clock it was written on."""

    event: Event
    day: date
    time: str  # "18:00", or "" all day
    until: str  # the end's time ("19:00"), with its day when it ends on another ("2026-12-04 01:00"), or ""


def on_member_clock(event: Event, zone: str) -> Shown:
    if event.all_day:
        return Shown(event, date.fromisoformat(event.start[:10]), "", "")
    tz = ZoneInfo(zone)
    start = datetime.fromisoformat(event.start).astimezone(tz)
    until = ""
    if event.end:
        end = datetime.fromisoformat(event.end).astimezone(tz)
        until = end.strftime("%H:%M") if end.date() == start.date() else end.strftime("%Y-%m-%d %H:%M")
    return Shown(event, start.date(), start.strftime("%H:%M"), until)


@dataclass(frozen=True)
class Span:
    """The days a view shows: the coming weeks as a list, a week (Monday first) or a month's weeks."""

    view: str
    mid: date  # the day the view is of: the month's first, the week's Monday, the list's first day
    first: date
    days: int
    previous: date | None
    next: date


def span(view: str, at: date, today: date) -> Span:
    if view == "week":
        monday = at - timedelta(days=at.weekday())
        return Span(view, monday, monday, 7, monday - timedelta(days=7), monday + timedelta(days=7))
    if view == "month":
        first = at.replace(day=1)
        monday = first - timedelta(days=first.weekday())
        last = first.replace(day=months.monthrange(first.year, first.month)[1])
        days = (last - monday).days + 1
        days += (7 - days % 7) % 7
        previous = (first - timedelta(days=1)).replace(day=1)
        return Span(view, first, monday, days, previous, (last + timedelta(days=1)))
    start = at if at >= today else today
    return Span("list", start, start, DAYS_SHOWN, None, start + timedelta(days=DAYS_SHOWN))


def _asked(request: web.Request, today: date) -> tuple[str, date]:
    view = request.query.get("view", "list")
    if view not in VIEWS:
        view = "list"
    try:
        at = date.fromisoformat(request.query.get("at", ""))
    except ValueError:
        at = today
    if not 1900 < at.year < 2200:
        at = today
    return view, at


_FORM_LIMIT = ics.MAX_BYTES + 64_000


def base(request: web.Request) -> str:
    configured = request.app[DEPS].settings.media.base_url
    return configured.rstrip("/") if configured else f"{request.scheme}://{request.host}"


async def calendar_page(
    request: web.Request, *, error: str | None = None, note: str | None = None, status: int = 400
) -> web.Response:
    viewer = request[VIEWER]
    today = request.app[DEPS].clock.now().astimezone(ZoneInfo(viewer.timezone)).date()
    view, at = _asked(request, today)
    shown_days = span(view, at, today)
    async with member_tools(request) as ctx:
        # A day before and after: an event written on another clock can fall on the member's day from there.
        first = shown_days.first - timedelta(days=1)
        listed = await list_events(ctx, ListEventsArgs(start=first, days=shown_days.days + 2, limit=MAX_LISTED))
        household_token = await feeds.token(ctx.conn, viewer.household_id, None)
        own_token = await feeds.token(ctx.conn, viewer.household_id, viewer.user_id)
    others = [m.name for m in ctx.members if m.id != viewer.user_id]
    shown = [on_member_clock(e, viewer.timezone) for e in listed.events]
    shown.sort(key=lambda e: (e.day, e.time))
    last = shown_days.first + timedelta(days=shown_days.days)
    return html(
        request,
        "calendar.html",
        status=status if error else 200,
        events=[e for e in shown if shown_days.first <= e.day < last],
        span=shown_days,
        days=[shown_days.first + timedelta(days=n) for n in range(shown_days.days)],
        today=today,
        more=listed.more,
        feeds={
            "household": f"{base(request)}/ics/{household_token}.ics",
            "mine": f"{base(request)}/ics/{own_token}.ics",
        },
        members=others,
        others=others,
        error=error,
        note=note,
    )


async def _refused(request: web.Request, exc: ToolRetry) -> web.Response:
    status, text = refusal(request, exc)
    return await calendar_page(request, error=text, status=status)


async def create(request: web.Request) -> web.Response:
    form = await request.post()
    try:
        args = AddEventArgs.model_validate(
            {
                "title": str(form.get("title", "")),
                "start": str(form.get("start", "")),
                "end": str(form.get("end", "")) or None,
                "whose": str(form.get("whose", "self")) or "self",
                **audience_fields(form),
            }
        )
    except ValidationError as exc:
        return await calendar_page(request, error=invalid(exc))
    try:
        async with member_tools(request) as ctx:
            await add_event(ctx, args)
    except ToolRetry as exc:
        return await _refused(request, exc)
    return redirect("/calendar")


async def cancel(request: web.Request) -> web.Response:
    args = EventIdArgs(event_id=row_id(request, "event_id"))
    try:
        async with member_tools(request) as ctx:
            await cancel_event(ctx, args)
    except ToolRetry as exc:
        return await _refused(request, exc)
    return redirect("/calendar")


async def create_json(request: web.Request) -> web.Response:
    """POST /app/events {"title", "start", "end", "whose", "visibility", "hidden_from"} (as `add_event` takes)."""
    return await json_tool(request, AddEventArgs, add_event, await json_body(request))


async def move_json(request: web.Request) -> web.Response:
    """POST /app/events/{event_id}/move {"start": "2026-12-12T16:30", "end": null}."""
    event_id = row_id(request, "event_id")
    return await json_tool(request, MoveEventArgs, move_event, {**await json_body(request), "event_id": event_id})


async def cancel_json(request: web.Request) -> web.Response:
    """POST /app/events/{event_id}/cancel."""
    return await json_tool(request, EventIdArgs, cancel_event, {"event_id": row_id(request, "event_id")})


async def upload(request: web.Request) -> web.Response:
    """An .ics file from the browser: its events join the calendar (a second upload of it changes nothing)."""
    if (request.content_length or 0) > _FORM_LIMIT:
        raise web.HTTPRequestEntityTooLarge(max_size=_FORM_LIMIT, actual_size=request.content_length or 0)
    form = await request.post()
    field = form.get("file")
    whose: Literal["self", "household"] = "household" if form.get("whose") == "household" else "self"
    if not isinstance(field, web.FileField):
        return await calendar_page(request, error="Choose an .ics file to upload.")
    data = field.file.read(ics.MAX_BYTES + 1)
    viewer = request[VIEWER]
    try:
        found = await asyncio.to_thread(ics.read, data, viewer.timezone)
    except ics.IcsError as exc:
        return await calendar_page(request, error=str(exc))
    chosen = audience_fields(form)
    try:
        async with member_tools(request) as ctx:
            kept = await audience(ctx, "import_events", chosen["visibility"], chosen["hidden_from"])
            result = await import_events(ctx, found, whose, kept)
    except ToolRetry as exc:
        return await _refused(request, exc)
    log.info(
        "calendar.imported",
        created=result.created,
        updated=result.updated,
        unchanged=result.unchanged,
        kept=result.kept,
    )
    note = f"Imported: {result.created} new, {result.updated} updated, {result.unchanged} unchanged."
    if result.kept:
        note += f" {result.kept} kept as they are: another member has them in the calendar."
    return await calendar_page(request, note=note)


async def rotate(request: web.Request) -> web.Response:
    """A new feed secret: every calendar subscribed with an old URL stops updating until given the new one."""
    viewer = request[VIEWER]
    async with request.app[DEPS].db.household(viewer.household_id, viewer.user_id) as conn:
        await feeds.rotate(conn, viewer.household_id)
    log.info("calendar.feed.rotated")
    return redirect("/calendar")


async def feed(request: web.Request) -> web.Response:
    """The calendar feed of a household or a member, as iCalendar; 404 for any token that is not valid now."""
    deps = request.app[DEPS]
    async with deps.db.unscoped() as conn:
        found = await feeds.verify(conn, request.match_info["token"])
    if found is None:
        raise web.HTTPNotFound()
    # A member's feed acts for that member (their private events are in it); the household's for nobody.
    async with deps.db.household(found.household_id, found.member_id) as conn:
        members = {m.id: m for m in await households.members(conn, found.household_id)}
        if found.member_id is not None and found.member_id not in members:
            raise web.HTTPNotFound()
        rows = await stored.feed(conn, found.household_id, found.member_id)
        name = await conn.fetchval("SELECT name FROM households WHERE id = $1", found.household_id)
    title = name if found.member_id is None else f"{name}: {members[found.member_id].name}"
    # Thousands of events take a second or more to write: off the event loop.
    body = await asyncio.to_thread(ics.calendar, title, [stored.as_ics(row) for row in rows], stamp=deps.clock.now())
    return web.Response(
        body=body,
        content_type="text/calendar",
        charset="utf-8",
        headers={"Cache-Control": "private, max-age=300", "Content-Disposition": 'inline; filename="calendar.ics"'},
    )
