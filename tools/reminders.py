"""The reminder tools: schedule_reminder, list_reminders, cancel_reminder, snooze_reminder and complete_reminder,
over the rows of `tools.storage.reminders`; firing reminders is `tools.storage.firings`; quiet hours are
`tools.quiet_hours`.

Times are stored in UTC together with the IANA timezone whose wall clock the reminder keeps (see
`tools/infra/recurrence.py` for how DST gaps and folds are resolved).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal, TypeVar
from zoneinfo import ZoneInfo

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)

from tools.audience import HiddenFromArg, VisibilityArg, audience
from tools.context import ToolContext
from tools.errors import RecurrenceError, RowNotFound, ToolRetry
from tools.fields import RowId
from tools.infra.periods import check_year
from tools.infra.recurrence import (
    HORIZON,
    occurrences,
    parse_rule,
    resolve_wall_time,
    wall_time,
)
from tools.infra.rrules import HORIZON_YEARS
from tools.permissions import check_change
from tools.storage import firings
from tools.storage import reminders as stored

# A time the model resolved a moment ago may have slipped into the past while the message was processed.
_PAST_GRACE = timedelta(minutes=1)
_SELF = frozenset({"self", "me", "myself"})
_HOUSEHOLD = frozenset({"household", "everyone", "all", "family", "all of us"})
_MAX_AHEAD_YEARS = 50
# Calendar work on the model's rule runs in a thread; it takes milliseconds, tens at worst (tools.infra.recurrence).
_RULE_TIMEOUT_S = 2.0
_T = TypeVar("_T")


def _datetime(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or len(value.strip()) <= 10:
        raise ValueError("expected an ISO 8601 date-time with a time of day, e.g. 2026-03-14T09:00")
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO 8601 date-time (e.g. 2026-03-14T09:00)") from None


When = Annotated[
    datetime,
    BeforeValidator(_datetime),
    AfterValidator(check_year),
    WithJsonSchema({"type": "string", "description": "ISO 8601 date-time, e.g. 2026-03-14T09:00"}),
]
ReminderId = RowId
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
Recipient = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]


class ScheduleReminderArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: Text = Field(description="what to remind of, as the recipient will read it, e.g. 'Call the dentist'")
    when: When = Field(
        description="the (first) time; without an offset it is read on the wall clock chosen by timezone_of"
    )
    rrule: Annotated[str, StringConstraints(strip_whitespace=True, max_length=300)] | None = Field(
        None, description="repeat rule, RFC 5545 RRULE, e.g. FREQ=WEEKLY;BYDAY=MO or FREQ=MONTHLY;BYMONTHDAY=1"
    )
    recipient: Recipient = Field("self", description='"self", "household" (every member) or a member\'s name')
    timezone_of: Literal["me", "recipient"] = Field(
        "me", description="whose wall clock `when` and the repetition follow: mine, or the one named recipient's"
    )
    visibility: VisibilityArg = "household"
    hidden_from: HiddenFromArg = None


class ReminderIdArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reminder_id: ReminderId


class SnoozeReminderArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reminder_id: ReminderId
    minutes: int | None = Field(None, ge=1, le=7 * 24 * 60, description="snooze this many minutes from now")
    until: When | None = Field(None, description="or until this time (without an offset: the member's clock)")

    @model_validator(mode="after")
    def _one_of(self) -> SnoozeReminderArgs:
        if (self.minutes is None) == (self.until is None):
            raise ValueError("give exactly one of minutes or until")
        return self


class MoveReminderArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reminder_id: ReminderId
    when: When = Field(description="the new time (without an offset: the member's clock)")


class ListRemindersArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    include_finished: bool = Field(False, description="also list done and cancelled reminders")
    limit: int = Field(20, ge=1, le=50)


class Reminder(BaseModel):
    reminder_id: int
    text: str
    status: str
    next_at: str | None = Field(None, description="next firing, on the reminder's wall clock")
    timezone: str
    rrule: str | None = None
    recipients: list[str]
    created_by: str | None = None
    last_fired_at: str | None = None
    visibility: str = "household"
    hidden_from: str | None = Field(None, description="the member it is kept from (a surprise for them)")
    edited_by: str | None = Field(None, description="the member who changed it last, when not its author")


class ScheduledReminder(Reminder):
    upcoming: list[str] = []
    note: str | None = None


class ReminderList(BaseModel):
    count: int
    reminders: list[Reminder]


class ChangedReminder(Reminder):
    previous: dict[str, Any] = Field(description="the reminder's state before this change, for undo")


# The tools that can leave an active reminder due at a new time, which then needs its job in the queue.
RESCHEDULING_TOOLS = frozenset(
    {"schedule_reminder", "snooze_reminder", "complete_reminder", "undo", "remind_before_event", "move_event"}
)


async def _members(ctx: ToolContext) -> dict[int, Any]:
    return await stored.members(ctx.conn, ctx.household_id)


def _iso(instant: datetime | None, tz: ZoneInfo) -> str | None:
    return None if instant is None else instant.astimezone(tz).isoformat(timespec="minutes")


def _reminder(row: Any, members: dict[int, Any]) -> Reminder:
    tz = ZoneInfo(row["timezone"])
    ids = sorted(members) if row["for_household"] else row["recipient_ids"]
    creator = members.get(row["created_by"])
    hidden = members.get(row["hidden_from"])
    editor = members.get(row["updated_by"]) if row["updated_by"] != row["created_by"] else None
    return Reminder(
        reminder_id=row["id"],
        text=row["text"],
        status=row["status"],
        next_at=_iso(row["next_fire_at"], tz),
        timezone=row["timezone"],
        rrule=row["rrule"],
        recipients=["household"] if row["for_household"] else [members[i]["name"] for i in ids if i in members],
        created_by=None if creator is None else creator["name"],
        last_fired_at=_iso(row["last_fired_at"], tz),
        visibility=row["visibility"],
        hidden_from=None if hidden is None else hidden["name"],
        edited_by=None if editor is None else editor["name"],
    )


def _recipients(ctx: ToolContext, members: dict[int, Any], recipient: str) -> tuple[list[int], bool]:
    """(recipient ids, for the whole household) of a `recipient` argument."""
    wanted = recipient.strip().lower()
    if wanted in _SELF:
        return [ctx.user_id], False
    if wanted in _HOUSEHOLD:
        return sorted(members), True
    found = [uid for uid, row in members.items() if row["name"].lower() == wanted]
    if not found:
        names = ", ".join(sorted(row["name"] for row in members.values()))
        raise ToolRetry(
            "schedule_reminder",
            f"no member named {recipient!r}; use 'self', 'household' or one of the members: {names}",
        )
    return found, False


async def schedule_reminder(ctx: ToolContext, args: ScheduleReminderArgs) -> ScheduledReminder:
    """Remind the member, another member or the whole household at a time, once or repeatedly.

    `when` is an ISO date-time resolved from what the member said ("tomorrow at 9" → 2026-03-14T09:00); without
    an offset it is read on the member's own clock (timezone_of "me") or, for one named member, on that member's
    clock (timezone_of "recipient", e.g. "remind Tom at 7:30 his time"). A repeating reminder takes an RFC 5545
    RRULE ("every Monday" → FREQ=WEEKLY;BYDAY=MO; "1st of every month" → FREQ=MONTHLY;BYMONTHDAY=1) and keeps
    its wall-clock time across daylight-saving changes; `when` is then its first time. `visibility: "private"`
    keeps a reminder for the member themselves to them alone ("only for me"); `hidden_from` keeps it from one
    member, who is then not reminded either ("a surprise for Sam"). Returns the reminder_id, its next times and a
    note when the time had to be adjusted (a wall time skipped by a DST change).
    """
    tool = "schedule_reminder"
    kept = await audience(ctx, tool, args.visibility, args.hidden_from)
    members = await _members(ctx)
    ids, for_household = _recipients(ctx, members, args.recipient)
    if kept.private and (for_household or ids != [ctx.user_id]):
        raise ToolRetry(tool, 'a private reminder is for the member alone: recipient "self", or make it "household"')
    if kept.hidden_from is not None and kept.hidden_from in ids and not for_household:
        raise ToolRetry(tool, "the reminder is for the member it is hidden from; choose another recipient")
    zone_name = ctx.timezone
    if args.timezone_of == "recipient":
        if for_household:
            raise ToolRetry("schedule_reminder", "timezone_of 'recipient' needs one named recipient, not 'household'")
        zone_name = members[ids[0]]["timezone"]
    tz = ZoneInfo(zone_name)
    note = None
    when = args.when.replace(microsecond=0)
    if when.tzinfo is None:
        dtstart_local = when
        instant = resolve_wall_time(when, tz)
        if wall_time(instant, tz) != when:
            shown = wall_time(instant, tz).strftime("%H:%M")
            note = f"{when:%H:%M} does not exist on {when:%Y-%m-%d} in {zone_name} (clocks go forward); using {shown}"
    else:
        instant = when.astimezone(UTC)
        dtstart_local = wall_time(instant, tz)
    if instant < ctx.now - _PAST_GRACE:
        raise ToolRetry(
            "schedule_reminder",
            f"{_iso(instant, tz)} is in the past (it is now {_iso(ctx.now, tz)} in {zone_name}); give a future time",
            for_member="That time is in the past.",
        )
    if instant.year - ctx.now.year > _MAX_AHEAD_YEARS:
        raise ToolRetry("schedule_reminder", f"give a time within the next {_MAX_AHEAD_YEARS} years")
    times = [instant]
    if args.rrule:
        rrule = args.rrule
        times = await _in_thread("schedule_reminder", lambda: _first_times(rrule, dtstart_local, tz, instant))
        instant = times[0]
    rrule_text = args.rrule.removeprefix("RRULE:").strip() if args.rrule else None
    row = await stored.insert(
        ctx.conn,
        household_id=ctx.household_id,
        created_by=ctx.user_id,
        recipient_ids=ids,
        text=args.text,
        timezone=zone_name,
        rrule=rrule_text,
        first_fire_at=instant,
        dtstart_local=dtstart_local,
        for_household=for_household,
        source_inbox_id=ctx.inbox_id,
        audience=kept,
    )
    base = _reminder(row, members)
    listed = [t for t in (_iso(i, tz) for i in times) if t is not None]
    return ScheduledReminder(**base.model_dump(), upcoming=listed, note=note)


def _first_times(rrule: str, dtstart_local: datetime, tz: ZoneInfo, instant: datetime) -> list[datetime]:
    """The rule's first three times from `instant` on; RecurrenceError when it does not fire within the horizon."""
    rule = parse_rule(rrule, dtstart_local, tz)
    times = list(itertools.islice(occurrences(rule, tz, instant, inclusive=True), 3))
    if not times:
        raise RecurrenceError(
            f"the rule {rrule!r} never fires between {_iso(instant, tz)} and {_iso(instant + HORIZON, tz)} "
            f"({HORIZON_YEARS} years); check that its parts can meet (e.g. FREQ=DAILY;INTERVAL=7 only reaches "
            "the weekday of `when`, and UNTIL must come after it)"
        )
    return times


async def _in_thread(tool: str, work: Callable[[], _T]) -> _T:
    """Calendar work on a rule the model wrote, off the event loop and bounded in time."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(work), _RULE_TIMEOUT_S)
    except TimeoutError:
        raise ToolRetry(tool, "the repeat rule takes too long to work out; give a simpler RRULE") from None
    except RecurrenceError as exc:
        raise ToolRetry(tool, str(exc)) from None


async def list_reminders(ctx: ToolContext, args: ListRemindersArgs) -> ReminderList:
    """The member's reminders: the ones for them, for the whole household, and the ones they set for others.

    Each has its reminder_id (for cancel, snooze and complete), text, status, next time, repeat rule and
    recipients. Finished (done, cancelled) reminders only with include_finished.
    """
    found = await stored.of_member(
        ctx.conn, ctx.household_id, ctx.user_id, include_finished=args.include_finished, limit=args.limit
    )
    members = await _members(ctx)
    return ReminderList(count=len(found), reminders=[_reminder(row, members) for row in found])


async def _locked(ctx: ToolContext, tool: str, reminder_id: int, *, answers: bool = False) -> Any:
    """The reminder, locked, when the member may change it — or, `answers` (snooze, done), when it is theirs to
    answer: a child may answer a reminder addressed to them, though an adult set it."""
    row = await stored.lock(ctx.conn, ctx.household_id, reminder_id)
    if row is None:
        raise RowNotFound(tool, f"there is no reminder {reminder_id}; list_reminders shows the reminder_ids")
    addressed = answers and (row["for_household"] or ctx.user_id in row["recipient_ids"])
    await check_change(ctx, tool, f"reminder {reminder_id}", row["created_by"], addressed=addressed)
    return row


async def _update(
    ctx: ToolContext, reminder_id: int, status: str, next_fire_at: datetime | None, occurrence: Any
) -> Any:
    return await stored.update(
        ctx.conn,
        ctx.household_id,
        reminder_id,
        status=status,
        next_fire_at=next_fire_at,
        occurrence_at=occurrence,
        changed_by_inbox_id=ctx.inbox_id,
        by=ctx.user_id,
    )


def _changed(row: Any, before: Any, members: dict[int, Any]) -> ChangedReminder:
    return ChangedReminder(**_reminder(row, members).model_dump(), previous=stored.state(before))


async def cancel_reminder(ctx: ToolContext, args: ReminderIdArgs) -> ChangedReminder:
    """Cancel a reminder for good (a repeating one stops repeating). Find its reminder_id with list_reminders."""
    row = before = await _locked(ctx, "cancel_reminder", args.reminder_id)
    if row["status"] != "cancelled":
        row = await _update(ctx, args.reminder_id, "cancelled", None, row["occurrence_at"])
    return _changed(row, before, await _members(ctx))


async def snooze_reminder(ctx: ToolContext, args: SnoozeReminderArgs) -> ChangedReminder:
    """Fire a reminder again later: `minutes` from now ("snooze 15 minutes") or `until` a time ("until 6pm").

    Use it for the reminder that was just sent when the member answers "snooze" (the context lists recently
    sent reminders with their ids). A repeating reminder keeps its schedule: after the snoozed firing it goes on
    with the next regular time after it (regular times inside the snooze are skipped).
    """
    row = await _locked(ctx, "snooze_reminder", args.reminder_id, answers=True)
    if row["status"] == "cancelled":
        raise ToolRetry("snooze_reminder", f"reminder {args.reminder_id} was cancelled; schedule a new one instead")
    if args.until is not None:
        until = args.until
        target = resolve_wall_time(until, ZoneInfo(ctx.timezone)) if until.tzinfo is None else until.astimezone(UTC)
    else:
        target = ctx.now + timedelta(minutes=args.minutes or 0)
    target = target.replace(microsecond=0)
    if target <= ctx.now:
        raise ToolRetry("snooze_reminder", f"{_iso(target, ZoneInfo(ctx.timezone))} is not in the future")
    # The snooze stands for the occurrence that was last sent, so a repeating reminder resumes after it.
    last = await stored.last_sent_occurrence(ctx.conn, args.reminder_id)
    updated = await _update(ctx, args.reminder_id, "active", target, last or row["occurrence_at"] or target)
    return _changed(updated, row, await _members(ctx))


async def move_reminder(ctx: ToolContext, args: MoveReminderArgs) -> ChangedReminder:
    """Move a reminder to another time ("the dentist is at 10:15 now", "swimming starts at half 5 from now on"): a
    one-off one fires then instead; a repeating one keeps its rule and fires at the new time from then on. The same
    reminder changes; no second one is made."""
    row = before = await _locked(ctx, "move_reminder", args.reminder_id)
    if row["status"] == "cancelled":
        raise ToolRetry("move_reminder", f"reminder {args.reminder_id} was cancelled; schedule a new one instead")
    tz = ZoneInfo(row["timezone"])
    when = args.when.replace(microsecond=0)
    instant = resolve_wall_time(when, tz) if when.tzinfo is None else when.astimezone(UTC)
    dtstart_local = when if when.tzinfo is None else wall_time(instant, tz)
    if instant <= ctx.now:
        shown = _iso(instant, tz)
        raise ToolRetry("move_reminder", f"{shown} is not in the future", for_member="That time is in the past.")
    if row["rrule"]:
        rrule = row["rrule"]
        instant = (await _in_thread("move_reminder", lambda: _first_times(rrule, dtstart_local, tz, instant)))[0]
    updated = await stored.update(
        ctx.conn,
        ctx.household_id,
        args.reminder_id,
        status="active",
        next_fire_at=instant,
        occurrence_at=instant,
        changed_by_inbox_id=ctx.inbox_id,
        by=ctx.user_id,
        dtstart_local=dtstart_local,
    )
    return _changed(updated, before, await _members(ctx))


async def complete_reminder(ctx: ToolContext, args: ReminderIdArgs) -> ChangedReminder:
    """Mark a reminder done ("done", "erledigt", "I did it"): a one-off one will not fire again; for a repeating
    one this occurrence is done (a pending snooze is dropped) and the schedule goes on — to stop a repeating
    reminder for good use cancel_reminder."""
    row = before = await _locked(ctx, "complete_reminder", args.reminder_id, answers=True)
    if row["status"] == "cancelled":
        raise ToolRetry("complete_reminder", f"reminder {args.reminder_id} was cancelled already")
    await stored.acknowledge_firings(ctx.conn, ctx.household_id, args.reminder_id, ctx.now)
    status, next_fire, occurrence = row["status"], row["next_fire_at"], row["occurrence_at"]
    if row["rrule"] is None:
        status, next_fire = "done", None
    elif status == "active" and next_fire != occurrence:  # a snooze is pending: resume the schedule instead
        rrule, dtstart, zone, after = row["rrule"], row["dtstart_local"], row["timezone"], max(occurrence, ctx.now)
        next_fire = await _in_thread("complete_reminder", lambda: firings.next_regular(rrule, dtstart, zone, after))
        occurrence = next_fire
        status = "active" if next_fire is not None else "done"
    if (status, next_fire, occurrence) != (row["status"], row["next_fire_at"], row["occurrence_at"]):
        row = await _update(ctx, args.reminder_id, status, next_fire, occurrence)
    return _changed(row, before, await _members(ctx))
