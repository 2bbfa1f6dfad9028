"""Routes for reminders: schedule one (the time and repetition come from the grounding, the recipient from the
names in the message), change one (cancel, snooze, done) and list them."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from engine.analysis import PlannedCall
from engine.executor import StepResult
from engine.routes.cues import CANCEL, SNOOZE
from engine.routes.phrases import say, when_text
from engine.routes.route import Ask, Picked, Said, Situation
from engine.routes.router import answers_a_reminder

# "alle"/"jeden" alone also mean "every" ("alle 2 Wochen", "jeden Freitag"): only the unambiguous forms count.
_HOUSEHOLD = re.compile(
    r"\b(?:everyone|everybody|all of us|the whole family|the family|us all)\b|大家|全家|所有人|\ballen\b"
    r"|\balle\b(?!\s+(?:\d|zwei|drei|vier|fünf|sechs|paar|\w+ (?:tage|wochen|monate)))|\bdie ganze familie\b"
    r"|\bjeden von uns\b",
    re.I,
)
_SNOOZE_MINUTES = 10


class ReminderAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)] = Field(
        description="what to remind of, short, in the member's language"
    )
    time: Annotated[str | None, Picked] = None


class ReminderRoute:
    name = "reminder"

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        keys = [m.key for m in situation.grounding.moments] + [r.key for r in situation.grounding.repeats]
        if not keys:
            whom = recipient(situation)
            shown = (
                say("me", situation.language)
                if whom == "self"
                else (say("household", situation.language) if whom == "household" else whom)
            )
            return Ask(say("ask_when", situation.language, whom=shown))
        situation.choices["time"] = keys
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel]:
        return ReminderAnswer

    def prompt(self, situation: Situation) -> str:
        found = situation.grounding.describe()
        return f"Found: {found}\nMessage: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        assert isinstance(answer, ReminderAnswer)
        key = answer.time if answer.time in situation.choices["time"] else situation.choices["time"][0]
        if len(situation.choices["time"]) == 1:
            key = situation.choices["time"][0]
        args: dict[str, Any] = {"text": answer.text, "recipient": recipient(situation)}
        repeat = next((r for r in situation.grounding.repeats if r.key == key), None)
        if repeat is not None:
            args["when"] = repeat.first.isoformat(timespec="minutes")
            args["rrule"] = repeat.rrule
        else:
            moment = next(m for m in situation.grounding.moments if m.key == key)
            args["when"] = moment.at.isoformat(timespec="minutes")
        return [PlannedCall(id="s1", tool="schedule_reminder", args=args)]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        result = results[0].result
        language = situation.language
        whom = recipient(situation)
        shown = say("me", language) if whom == "self" else say("household", language) if whom == "household" else whom
        when = when_text(datetime.fromisoformat(str(result["next_at"])).replace(tzinfo=None), language)
        if result.get("rrule"):
            repeat = next((r for r in situation.grounding.repeats), None)
            rule = repeat.text if repeat is not None else str(result["rrule"])
            return say("reminder_repeats", language, whom=shown, rule=rule, when=when, text=result["text"])
        return say("reminder_set", language, whom=shown, when=when, text=result["text"])


def recipient(situation: Situation) -> str:
    """Who the reminder is for: the member named right after "remind" ("remind Ben", "提醒Ben", "erinnere Ben"),
    the household when the message says everyone, otherwise the member who wrote."""
    text = situation.text
    me = situation.run.message.user_id
    for member in situation.run.members:
        if member.id == me:
            continue
        name = re.escape(member.name)
        # Not \b after the name: "提醒Ben带伞" has no word boundary between "Ben" and "带".
        after = r"(?![A-Za-z0-9])"
        asked = rf"(?:remind|提醒|erinnere?|tell)\s*@?{name}{after}|{name}{after}\s*needs to be reminded"
        german_end = rf"\b{name}{after}(?:\s+\S+){{0,6}}\s+(?:daran\s+)?erinner(?:n|t)\b"  # "Ben an den Müll erinnern"
        if re.search(asked, text, re.I) or re.search(german_end, text, re.I):
            return member.name
    if _HOUSEHOLD.search(text):
        return "household"
    return "self"


class ReminderPick(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reminder_id: Annotated[int, Picked]


class ReminderChangeRoute:
    name = "reminder_change"

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        fired = situation.history.fired
        rows: list[dict[str, Any]] = []
        if fired and answers_a_reminder(situation.text) and not CANCEL.search(situation.text):
            newest = fired[0]
            rows = [{"reminder_id": newest.reminder_id, "text": newest.text, "next_at": None, "rrule": None}]
        else:
            run = situation.run
            registry = run.deps.registry
            args = registry.validate("list_reminders", {"limit": 20})
            async with run.transaction() as conn:
                listed = await registry.run(run.tool_context(conn), "list_reminders", args)
            rows = list(listed.get("reminders", []))
        if not rows:
            return Said(say("no_reminders", situation.language))
        situation.rows = rows
        situation.choices["reminder_id"] = [row["reminder_id"] for row in rows]
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return ReminderPick if len(situation.rows) > 1 else None

    def prompt(self, situation: Situation) -> str:
        listed = " | ".join(f"[{row['reminder_id']}] {_reminder_text(row)}" for row in situation.rows)
        return f"Reminders: {listed}\nMessage: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        reminder_id = answer.reminder_id if isinstance(answer, ReminderPick) else situation.rows[0]["reminder_id"]
        action = change_action(situation.text)
        if action == "snooze":
            args: dict[str, Any] = {"reminder_id": reminder_id}
            moments = [m for m in situation.grounding.moments if m.has_time]
            if situation.grounding.minutes:
                args["minutes"] = situation.grounding.minutes[0]
            elif moments:
                args["until"] = moments[0].at.isoformat(timespec="minutes")
            else:
                args["minutes"] = _SNOOZE_MINUTES
            return [PlannedCall(id="s1", tool="snooze_reminder", args=args)]
        tool = "complete_reminder" if action == "done" else "cancel_reminder"
        return [PlannedCall(id="s1", tool=tool, args={"reminder_id": reminder_id})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        result = results[0].result
        language = situation.language
        if results[0].tool == "snooze_reminder":
            at = datetime.fromisoformat(str(result["next_at"])).replace(tzinfo=None)
            return say("snoozed", language, when=when_text(at, language), text=result["text"])
        key = "done" if results[0].tool == "complete_reminder" else "cancelled"
        return say(key, language, text=result["text"])


def change_action(text: str) -> Literal["cancel", "snooze", "done"]:
    """What the member does to the reminder: the words say; a message that only points at it ("the bins
    reminder", "don't need it anymore") stops it."""
    if CANCEL.search(text):
        return "cancel"
    if SNOOZE.search(text):
        return "snooze"
    if answers_a_reminder(text):
        return "done"
    return "cancel"


class ListRoute:
    name = "list"

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return None

    def prompt(self, situation: Situation) -> str:
        return ""

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        return [PlannedCall(id="s1", tool="list_reminders", args={"limit": 20})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        rows = results[0].result.get("reminders", [])
        if not rows:
            return say("no_reminders", situation.language)
        lines = [say("reminders", situation.language)]
        lines += [f"- {_reminder_text(row, situation.language)}" for row in rows]
        return "\n".join(lines)


def _reminder_text(row: dict[str, Any], language: str = "en") -> str:
    parts = [str(row.get("text", ""))]
    if row.get("next_at"):
        at = datetime.fromisoformat(str(row["next_at"])).replace(tzinfo=None)
        parts.append(when_text(at, language))
    if row.get("rrule"):
        parts.append(f"({row['rrule']})")
    recipients = row.get("recipients") or []
    if recipients:
        parts.append("→ " + ", ".join(recipients))
    return " ".join(parts)
