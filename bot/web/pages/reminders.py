"""The reminders page: the member's reminders (create, snooze, complete, cancel — through the reminder tools),
their quiet hours, and their notification feed (reminders and digests delivered to them)."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from aiohttp import web
from pydantic import ValidationError

from bot.channels.live import announce_household_change
from bot.web.pages.render import VIEWER, html, redirect
from bot.web.pages.security import DEPS
from bot.web.pages.tooling import audience_fields, invalid, json_body, json_error, member_tools, refusal, row_id
from engine.deps import Deps
from tools.errors import ToolRetry
from tools.infra import vapid
from tools.infra.queue import FIRE_REMINDER, enqueue_urgent, reminder_job_id
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
from tools.storage import outbox, push
from tools.storage import reminders as stored

REPEATS = {"": None, "daily": "FREQ=DAILY", "weekly": "FREQ=WEEKLY", "monthly": "FREQ=MONTHLY"}
SNOOZES = (15, 60, 24 * 60)


async def reminders_page(request: web.Request, *, error: str | None = None, status: int = 400) -> web.Response:
    viewer = request[VIEWER]
    zone = ZoneInfo(viewer.timezone)
    async with member_tools(request) as ctx:
        listed = await list_reminders(ctx, ListRemindersArgs(include_finished=False, limit=50))
        quiet = await stored.quiet_hours(ctx.conn, viewer.household_id, viewer.user_id)
        feed = await outbox.notifications(ctx.conn, viewer.user_id, limit=20)
        push_key = None
        if request.app[DEPS].settings.webpush.enabled:  # the key this browser subscribes to push with
            push_key = vapid.public_key(await push.ensure_key(ctx.conn, viewer.household_id))
    others = [m.name for m in ctx.members if m.id != viewer.user_id]
    return html(
        request,
        "reminders.html",
        status=status if error else 200,
        reminders=listed.reminders,
        quiet=[None if t is None else t.strftime("%H:%M") for t in quiet],
        feed=[(note.text, (note.sent_at or note.created_at).astimezone(zone)) for note in feed],
        members=others,
        others=others,
        repeats=list(REPEATS),
        snoozes=SNOOZES,
        push_key=push_key,
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
    await enqueue_urgent(
        deps.redis,
        FIRE_REMINDER,
        reminder.reminder_id,
        household_id,
        fire_at.isoformat(),
        job_id=reminder_job_id(reminder.reminder_id, fire_at),
        at=fire_at,
    )


async def _run(request: web.Request, action: Any, args: Any) -> Reminder:
    """Run one reminder tool; a reminder due soon also gets its job."""
    async with member_tools(request) as ctx:
        reminder: Reminder = await action(ctx, args)
    deps, household_id = request.app[DEPS], request[VIEWER].household_id
    await _enqueue_if_soon(deps, household_id, reminder)
    await announce_household_change(deps, household_id, "reminders")  # the household's other open pages
    return reminder


async def _act(request: web.Request, action: Any, args: Any) -> web.Response:
    try:
        await _run(request, action, args)
    except ToolRetry as exc:
        status, text = refusal(request, exc)
        return await reminders_page(request, error=text, status=status)
    return redirect("/reminders")


def _schedule_args(fields: dict[str, Any]) -> ScheduleReminderArgs:
    repeat = str(fields.get("repeat") or "")
    if repeat not in REPEATS:
        raise web.HTTPBadRequest(reason="Unknown repetition")
    return ScheduleReminderArgs.model_validate(
        {
            "text": str(fields.get("text", "")),
            "when": str(fields.get("when", "")),  # datetime-local, on the member's clock
            "rrule": REPEATS[repeat],
            "recipient": str(fields.get("recipient", "self")) or "self",
            "timezone_of": "me",
            **{key: fields[key] for key in ("visibility", "hidden_from") if key in fields},
        }
    )


async def create(request: web.Request) -> web.Response:
    form = await request.post()
    try:
        args = _schedule_args({**form, **audience_fields(form)})
    except ValidationError as exc:
        return await reminders_page(request, error=invalid(exc))
    return await _act(request, schedule_reminder, args)


def _snooze_args(request: web.Request, minutes: Any) -> SnoozeReminderArgs:
    try:
        return SnoozeReminderArgs(reminder_id=row_id(request, "reminder_id"), minutes=int(str(minutes)), until=None)
    except (ValueError, ValidationError):
        raise web.HTTPBadRequest(reason="Snooze for 1 minute to 7 days") from None


async def snooze(request: web.Request) -> web.Response:
    return await _act(request, snooze_reminder, _snooze_args(request, (await request.post()).get("minutes", "15")))


async def complete(request: web.Request) -> web.Response:
    return await _act(request, complete_reminder, ReminderIdArgs(reminder_id=row_id(request, "reminder_id")))


async def cancel(request: web.Request) -> web.Response:
    return await _act(request, cancel_reminder, ReminderIdArgs(reminder_id=row_id(request, "reminder_id")))


# JSON ------------------------------------------------------------------------------------------------------------

_ACTIONS = {"snooze": snooze_reminder, "complete": complete_reminder, "cancel": cancel_reminder}


async def _json_act(request: web.Request, action: Any, build: Any) -> web.Response:
    try:
        args = build()
        reminder = await _run(request, action, args)
    except ValidationError as exc:
        return json_error(400, "invalid", invalid(exc))
    except ToolRetry as exc:
        status, text = refusal(request, exc)
        return json_error(status, exc.problem, text)
    return web.json_response(reminder.model_dump(mode="json"))


async def create_json(request: web.Request) -> web.Response:
    """POST /app/reminders {"text", "when", "recipient", "repeat", "visibility", "hidden_from"}."""
    body = await json_body(request)
    return await _json_act(request, schedule_reminder, lambda: _schedule_args(body))


async def act_json(request: web.Request) -> web.Response:
    """POST /app/reminders/{reminder_id}/{snooze|complete|cancel} (snooze: {"minutes": 15})."""
    action = request.match_info["action"]
    if action not in _ACTIONS:
        raise web.HTTPNotFound()
    body = await json_body(request)
    if action == "snooze":
        return await _json_act(request, snooze_reminder, lambda: _snooze_args(request, body.get("minutes", 15)))
    return await _json_act(
        request, _ACTIONS[action], lambda: ReminderIdArgs(reminder_id=row_id(request, "reminder_id"))
    )


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
        return await reminders_page(request, error=invalid(exc))
    async with member_tools(request) as ctx:
        await set_quiet_hours(ctx, args)
    return redirect("/reminders")
