"""Forgetting a member: "forget everything about me" — their private data and links go, their household entries
stay with a "former member" — always after a yes."""

from __future__ import annotations

from pydantic import BaseModel

from engine.analysis import PlannedCall
from engine.capabilities.capability import Ask, Capability, Reading, Said, Situation
from engine.capabilities.phrases import say
from engine.capabilities.words import (
    cues,
)
from engine.executor import StepResult

FORGET_ME = cues(
    r"\b(?:delete|erase|remove|forget) everything (?:you know )?about me\b",
    r"\bforget (?:everything|all) (?:about|of) me\b",
    r"\b(?:delete|erase|remove) (?:all )?(?:my (?:data|account)|everything about me)\b",
    r"\bvergiss alles über mich\b",
    r"\blösche? (?:alle )?meine daten\b",
    r"忘记关于我的一切|忘掉关于我的一切|删除我的(?:所有)?数据",
)


class ForgetMe(Capability):
    name = "forget_me"
    description = "the member asks FAA to forget everything about them"
    examples = {
        "en": ("forget everything about me", "delete my data", "erase everything you know about me"),
        "de": ("vergiss alles über mich", "lösche meine Daten"),
        "zh": ("忘记关于我的一切", "删除我的所有数据"),
    }
    refines = ("*",)
    tools = ("forget_me",)
    consent = "always"
    needs_cue = True

    def claims(self, reading: Reading) -> bool:
        return FORGET_ME.search(reading.text) is not None

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
