"""Which reminders there are: listed by the `list_reminders` tool, no model call."""

from __future__ import annotations

from pydantic import BaseModel

from engine.analysis import PlannedCall
from engine.capabilities._reminders import reminder_text
from engine.capabilities.capability import Ask, Capability, Reading, Said, Situation
from engine.capabilities.forget import FORGET
from engine.capabilities.phrases import say
from engine.capabilities.reminder_change import CANCEL, DROP
from engine.capabilities.words import (
    cues,
)
from engine.executor import StepResult

LIST = cues(
    r"\b(?:what|which|list|show|any)\b.{0,30}\breminders\b",
    r"\bmy reminders\b",
    r"\breminders do i have",
    r"有哪些提醒",
    r"我的提醒",
    r"提醒列表",
    r"什么提醒",
    r"welche erinnerungen",
    r"meine erinnerungen",
)


class ReminderList(Capability):
    name = "list"
    description = "asks which reminders there are"
    examples = {
        "en": (
            "what reminders do I have?",
            "show my reminders",
            "any reminders set for tomorrow?",
            "which reminders are running for tomorrow",
            "list all my reminders pls",
            "what are you gonna nag me about this week",
            "what reminders has ben got",
            "which pings are coming up today",
            "what's ben got reminders for",
            "show me the recurring reminders",
        ),
        "de": (
            "welche Erinnerungen habe ich?",
            "zeig meine Erinnerungen",
            "welche erinnerungen laufen grad",
            "welche erinnerungen hab ich morgen",
            "meine erinnerungen für diese woche bitte",
            "zeig mal meine erinnerungen von heute",
            "welche erinnerungen wiederholen sich jeden monat",
            "welche erinnerungen hat tom",
            "meine erinnerungen?",
            "welche erinnerungen gibts für nächste woche",
        ),
        "zh": (
            "我有哪些提醒？",
            "看看我的提醒",
            "明天都有什么提醒",
            "我的提醒都列出来",
            "我的提醒里有交电费那条吗",
            "今天还有什么提醒",
            "小明有哪些提醒",
            "明天有什么提醒",
            "看下提醒列表",
            "把提醒列表发我看看",
        ),
    }
    refines = ("reminder", "reminder_change", "lookup", "sum", "calendar", "forget", "fact")
    tools = ("list_reminders",)
    asks = True
    needs_cue = True

    def claims(self, reading: Reading) -> bool:
        """Asked which reminders there are — not told to delete or cancel them ("delete all my reminders" waits for a
        yes in `reminder_change`)."""
        text = reading.text
        return LIST.search(text) is not None and not (FORGET.search(text) or CANCEL.search(text) or DROP.search(text))

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
        lines += [f"- {reminder_text(row, situation.language)}" for row in rows]
        return "\n".join(lines)
