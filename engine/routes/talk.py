"""Routes that store nothing: greetings and thanks (answered without the model), small talk (one short reply from
the model, no tools), and messages too vague to act on (one question back)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

from engine.analysis import PlannedCall
from engine.executor import StepResult
from engine.routes.phrases import say
from engine.routes.route import Ask, Said, Situation

_THANKS = re.compile(r"thank|thx|\bty\b|cheers|danke|谢", re.I)
_GREETING = re.compile(
    r"^\W*(?:hi|hello|hey|yo|hiya|good (?:morning|evening)|hallo|guten|moin|servus|你好|您好|早|哈喽)", re.I
)


class ChatAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reply: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=400)]


class ChatRoute:
    name = "chat"

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        if _THANKS.search(situation.text):
            return Said(say("thanks", situation.language))
        if _GREETING.search(situation.text) and len(situation.text) <= 40:
            return Said(say("greeting", situation.language))
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel]:
        return ChatAnswer

    def prompt(self, situation: Situation) -> str:
        return f"Message: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        return []

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        return answer.reply if isinstance(answer, ChatAnswer) else say("greeting", situation.language)


class UnclearRoute:
    name = "unclear"

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        return Ask(say("ask_what", situation.language))

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return None

    def prompt(self, situation: Situation) -> str:
        return ""

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        return Ask(say("ask_what", situation.language))

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        return say("ask_what", situation.language)
