"""Routes for the calendar: what is on (a stretch of days from the grounding, listed by the `list_events` tool),
a reminder before an event ("an hour before the dentist": the duration from the grounding, the event from the
calendar), an event that moved ("the dentist moved to 4pm": the new time from the grounding; its reminders move
with it), an event called off ("cancel the dentist": it leaves the calendar with its reminders), and a member's
request to be forgotten (which runs only after their yes, see `engine.consent`).

Putting a plan with a time into the calendar is the fact route's: it stores the note and adds the event."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict

from engine.analysis import PlannedCall
from engine.executor import StepResult
from engine.routes.cues import FILLER
from engine.routes.phrases import say, when_text
from engine.routes.reminders import recipient
from engine.routes.route import Ask, Picked, Reroute, Said, Situation

_UPCOMING_DAYS = 60
_WORD = re.compile(r"[^\W\d_]{3,}")
_HAN = re.compile(r"[\u4e00-\u9fff]+")
# The routes' own words, which name no event ("remind me an hour before", "cancel", "moved").
_NOT_NAMES = re.compile(
    r"remind\w*|before|ahead|hours?|minutes?|mins?|moved?|cancel\w*|call|off|erinner\w*|vorher|stunden?|minuten|"
    r"verschoben|verlegt|absagen|abgesagt|termin",
    re.IGNORECASE,
)
_CLOCK_ONLY = re.compile(r"(?:上午|下午|晚上|早上|中午)?\s*\d{1,2}(?:[:：]\d{2}|点(?:半|\d{1,2}分?)?)")


def days_asked(situation: Situation) -> tuple[date, int]:
    """(first day, number of days) the question is about: the named period's rest, the day named, or a week."""
    now = situation.run.deps.clock.now()
    today = now.astimezone(_zone(situation)).date()
    period = situation.grounding.period
    if period == "today":
        return today, 1
    if period == "this_week":
        return today, 7 - today.weekday()
    if period == "this_month":
        following = (today.replace(day=1) + timedelta(days=32)).replace(day=1)
        return today, (following - today).days
    days = [m.at.date() for m in situation.grounding.moments if m.at.date() >= today]
    if days:
        return days[0], 1
    return today, 7


def _zone(situation: Situation) -> ZoneInfo:
    return ZoneInfo(situation.run.timezone)


def event_line(row: dict[str, Any], language: str) -> str:
    whose = row.get("whose")
    return f"{starts(row, language)}: {row.get('title', '')}" + (
        f" ({whose})" if whose and whose != "household" else ""
    )


def starts(row: dict[str, Any], language: str) -> str:
    """When an event (as the event tools return it) starts, as the member reads it."""
    start = str(row.get("start", ""))
    if row.get("all_day") or len(start) <= 10:
        return when_text(datetime.fromisoformat(start[:10]), language, with_time=False)
    return when_text(datetime.fromisoformat(start).replace(tzinfo=None), language)


class CalendarRoute:
    name = "calendar"

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return None

    def prompt(self, situation: Situation) -> str:
        return ""

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        first, days = days_asked(situation)
        return [PlannedCall(id="s1", tool="list_events", args={"start": first.isoformat(), "days": days})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        result = results[0].result
        language = situation.language
        rows = result.get("events", [])
        if not rows:
            return say("no_events", language, first=result.get("start", ""), last=result.get("end", ""))
        return "\n".join([say("events", language), *(f"- {event_line(row, language)}" for row in rows)])


class EventPick(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event_id: Annotated[int, Picked]


class EventReminderRoute:
    name = "event_reminder"

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        unique = {row["event_id"]: row for row in await _upcoming(situation)}
        if not unique:
            return Said(say("no_upcoming_events", situation.language))
        named = _named(situation.text, list(unique.values()))
        if not named:  # "10 minutes before the guests arrive": no event of the calendar is meant
            return Reroute("reminder")
        situation.rows = [unique[event_id] for event_id in named]
        situation.choices["event_id"] = named
        if len(named) == 1:
            situation.decided = EventPick(event_id=named[0])
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return EventPick if len(situation.rows) > 1 and situation.decided is None else None

    def prompt(self, situation: Situation) -> str:
        listed = " | ".join(f"[{row['event_id']}] {event_line(row, 'en')}" for row in situation.rows)
        return f"Events: {listed}\nMessage: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        picked = answer if isinstance(answer, EventPick) else situation.decided
        event_id = picked.event_id if isinstance(picked, EventPick) else situation.rows[0]["event_id"]
        minutes = situation.grounding.minutes[0] if situation.grounding.minutes else 60
        args = {"event_id": event_id, "minutes_before": minutes, "recipient": recipient(situation)}
        return [PlannedCall(id="s1", tool="remind_before_event", args=args)]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        result = results[0].result
        language = situation.language
        whom = recipient(situation)
        shown = say("me", language) if whom == "self" else say("household", language) if whom == "household" else whom
        at = datetime.fromisoformat(str(result["next_at"])).replace(tzinfo=None)
        return say(
            "event_reminder_set",
            language,
            whom=shown,
            when=when_text(at, language),
            minutes=result["minutes_before"],
            text=result["text"],
        )


def _named(text: str, rows: list[dict[str, Any]]) -> list[int]:
    """The events whose title shares the most words with the message (none when no title shares a word)."""
    said = _words(text)
    scores = {row["event_id"]: len(said & _words(str(row["title"]))) for row in rows}
    best = max(scores.values(), default=0)
    return [] if best == 0 else [event_id for event_id, score in scores.items() if score == best]


def _words(text: str) -> set[str]:
    """Words of three letters or more, and pairs of Chinese characters (Chinese has no spaces between words)."""
    pairs = {run[i : i + 2] for run in _HAN.findall(text) for i in range(len(run) - 1)}
    words = {word.lower() for word in _WORD.findall(text)}
    return {word for word in words if not (FILLER.fullmatch(word) or _NOT_NAMES.fullmatch(word))} | pairs


class _NamedEventRoute:
    """A change to the coming event the message names; the model picks only among events named alike. A message
    that names no event of the calendar goes to `otherwise`."""

    otherwise: str

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        rows = await _upcoming(situation)
        named = _named(situation.text, rows)
        if not named:
            return Reroute(self.otherwise)
        by_id = {row["event_id"]: row for row in rows}
        situation.rows = [by_id[event_id] for event_id in named]
        situation.choices["event_id"] = named
        if len(named) == 1:
            situation.decided = EventPick(event_id=named[0])
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return EventPick if situation.decided is None else None

    def prompt(self, situation: Situation) -> str:
        listed = " | ".join(f"[{row['event_id']}] {event_line(row, 'en')}" for row in situation.rows)
        return f"Events: {listed}\nMessage: {situation.text}"


class EventMoveRoute(_NamedEventRoute):
    name = "event_change"
    otherwise = "update"  # a correction of a stored note

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        picked = answer if isinstance(answer, EventPick) else situation.decided
        assert isinstance(picked, EventPick)
        row = next(row for row in situation.rows if row["event_id"] == picked.event_id)
        moments = sorted(situation.grounding.moments, key=lambda m: not m.has_time)
        moment = moments[0]
        if moment.has_time and _time_only(moment.text):  # "moved to 16:30": the same day, a new time
            start = f"{str(row['start'])[:10]}T{moment.at:%H:%M}"
        elif moment.has_time:
            start = moment.at.isoformat(timespec="minutes")
        elif row.get("all_day"):
            start = moment.at.date().isoformat()
        else:  # "moved to Saturday": the same time of day on the new day
            start = f"{moment.at.date().isoformat()}T{str(row['start'])[11:16]}"
        return [PlannedCall(id="s1", tool="move_event", args={"event_id": picked.event_id, "start": start})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        result = results[0].result
        return say(
            "event_moved",
            situation.language,
            text=result["title"],
            when=event_line(result, situation.language).split(": ")[0],
        )


class EventCancelRoute(_NamedEventRoute):
    name = "event_cancel"
    otherwise = "reminder_change"  # "cancel the bins" is about a reminder

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        picked = answer if isinstance(answer, EventPick) else situation.decided
        assert isinstance(picked, EventPick)
        return [PlannedCall(id="s1", tool="cancel_event", args={"event_id": picked.event_id})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        return say("event_cancelled", situation.language, text=results[0].result["title"])


def _time_only(said: str) -> bool:
    """A moment the member gave as a time of day alone (the grounding marks a time without a date "(X/X)")."""
    return "(X/X)" in said or _CLOCK_ONLY.fullmatch(said.strip()) is not None


async def _upcoming(situation: Situation) -> list[dict[str, Any]]:
    """The calendar's coming one-off events, one row each (its next start)."""
    run = situation.run
    registry = run.deps.registry
    args = registry.validate("list_events", {"days": _UPCOMING_DAYS})
    async with run.transaction() as conn:
        listed = await registry.run(run.tool_context(conn), "list_events", args)
    now = run.deps.clock.now().astimezone(_zone(situation)).isoformat(timespec="minutes")
    rows = [row for row in listed.get("events", []) if not row.get("rrule") and str(row["start"]) > now[:16]]
    return list({row["event_id"]: row for row in rows}.values())


class ForgetMeRoute:
    name = "forget_me"

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return None

    def prompt(self, situation: Situation) -> str:
        return ""

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        return [PlannedCall(id="s1", tool="forget_me", args={})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        ok = bool(results) and results[0].ok
        return say("forgot_me", situation.language) if ok else ""
