"""The reminders page: the member's reminders (create, snooze, complete, cancel — through the reminder tools),
their quiet hours, and their notification feed (reminders and digests delivered to them)."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from aiohttp import web
from pydantic import ValidationError

from bot.web.pages.render import VIEWER, html, redirect
from bot.web.pages.security import DEPS
from bot.web.pages.tooling import member_tools
from engine.deps import Deps
from tools.errors import ToolRetry
from tools.infra.queue import FIRE_REMINDER, reminder_job_id
from tools.quiet_hours import SetQuietHoursArgs, set_quiet_hours
from tools.reminders import (
    ListRemindersArgs,
    Reminder,
    ReminderIdArgs,
    ScheduleReminderArgs,
    SnoozeReminderArgs,
    cancel_reminder,
    complete_reminder,
    list_reminders,
    schedule_reminder,
    snooze_reminder,
)
from tools.storage import households, outbox
from tools.storage import reminders as stored

REPEATS = {"": None, "daily": "FREQ=DAILY", "weekly": "FREQ=WEEKLY", "monthly": "FREQ=MONTHLY"}
SNOOZES = (15, 60, 24 * 60)


async def reminders_page(request: web.Request, *, error: str | None = None) -> web.Response:
    viewer = request[VIEWER]
    zone = ZoneInfo(viewer.timezone)
    async with member_tools(request) as ctx:
        listed = await list_reminders(ctx, ListRemindersArgs(include_finished=False, limit=50))
        quiet = await stored.quiet_hours(ctx.conn, viewer.household_id, viewer.user_id)
        feed = await outbox.notifications(ctx.conn, viewer.user_id, limit=20)
        members = await households.members(ctx.conn, viewer.household_id)
    return html(
        request,
        "reminders.html",
        status=400 if error else 200,
        reminders=listed.reminders,
        quiet=[None if t is None else t.strftime("%H:%M") for t in quiet],
        feed=[(note.text, (note.sent_at or note.created_at).astimezone(zone)) for note in feed],
        members=[m.name for m in members if m.id != viewer.user_id],
        repeats=list(REPEATS),
        snoozes=SNOOZES,
        error=error,
    )


async def _enqueue_if_soon(deps: Deps, household_id: int, reminder: Reminder) -> None:
    """Reminders are rows first: one due within the look-ahead also gets its deferred job now, as after a
    message (later ones are enqueued by the worker's sweeper when their time comes near)."""
    if reminder.status != "active" or reminder.next_at is None:
        return
    fire_at = datetime.fromisoformat(reminder.next_at)
    if (fire_at - deps.clock.now()).total_seconds() > deps.settings.reminder.lookahead_s:
        return
    await deps.redis.enqueue_job(
        FIRE_REMINDER,
        reminder.reminder_id,
        household_id,
        fire_at.isoformat(),
        _job_id=reminder_job_id(reminder.reminder_id, fire_at),
        _defer_until=fire_at if fire_at > deps.clock.now() else None,
    )


async def _act(request: web.Request, action: Any, args: Any) -> web.Response:
    try:
        async with member_tools(request) as ctx:
            reminder = await action(ctx, args)
    except ToolRetry as exc:
        return await reminders_page(request, error=exc.message)
    await _enqueue_if_soon(request.app[DEPS], request[VIEWER].household_id, reminder)
    return redirect("/reminders")


def _reminder_id(request: web.Request) -> int:
    try:
        return int(request.match_info["reminder_id"])
    except ValueError:
        raise web.HTTPNotFound() from None


async def create(request: web.Request) -> web.Response:
    form = await request.post()
    repeat = str(form.get("repeat", ""))
    if repeat not in REPEATS:
        raise web.HTTPBadRequest(reason="Unknown repetition")
    try:
        args = ScheduleReminderArgs(
            text=str(form.get("text", "")),
            when=str(form.get("when", "")),  # type: ignore[arg-type]  # datetime-local, on the member's clock
            rrule=REPEATS[repeat],
            recipient=str(form.get("recipient", "self")) or "self",
            timezone_of="me",
        )
    except ValidationError as exc:
        return await reminders_page(request, error="; ".join(str(e["msg"]) for e in exc.errors()))
    return await _act(request, schedule_reminder, args)


async def snooze(request: web.Request) -> web.Response:
    try:
        minutes = int(str((await request.post()).get("minutes", "15")))
        args = SnoozeReminderArgs(reminder_id=_reminder_id(request), minutes=minutes, until=None)
    except (ValueError, ValidationError):
        raise web.HTTPBadRequest(reason="Snooze for 1 minute to 7 days") from None
    return await _act(request, snooze_reminder, args)


async def complete(request: web.Request) -> web.Response:
    return await _act(request, complete_reminder, ReminderIdArgs(reminder_id=_reminder_id(request)))


async def cancel(request: web.Request) -> web.Response:
    return await _act(request, cancel_reminder, ReminderIdArgs(reminder_id=_reminder_id(request)))


def _clock(value: str) -> time | None:
    if not value.strip():
        return None
    try:
        return time.fromisoformat(value.strip())
    except ValueError:
        raise web.HTTPBadRequest(reason=f"{value!r} is not a time like 22:00") from None


async def quiet_hours(request: web.Request) -> web.Response:
    form = await request.post()
    try:
        args = SetQuietHoursArgs(start=_clock(str(form.get("start", ""))), end=_clock(str(form.get("end", ""))))
    except ValidationError as exc:
        return await reminders_page(request, error="; ".join(str(e["msg"]) for e in exc.errors()))
    async with member_tools(request) as ctx:
        await set_quiet_hours(ctx, args)
    return redirect("/reminders")
