"""A message too vague to act on ("write down the thing"): one question back, nothing written."""

from __future__ import annotations

from pydantic import BaseModel

from engine.analysis import PlannedCall
from engine.capabilities.capability import Ask, Capability, Reading, Said, Situation
from engine.capabilities.phrases import say
from engine.capabilities.words import cues, is_vague
from engine.executor import StepResult
from engine.grounding.language import name_pattern

# What to do left to another text: "do exactly what it says", "follow these instructions", "mach, was da steht",
# "照着做".
DEFERRING = cues(
    r"\bdo (?:exactly |just )?(?:what|as) (?:it|this|that) says\b",
    r"\bfollow (?:the|these|those|its) instructions\b",
    r"\b(?:mach\w*|tu),? was (?:da|dort|drin|darin) steht\b",
    r"照着(?:做|办)|按(?:照)?(?:上面|里面|它)说的(?:做|办)",
)


class Unclear(Capability):
    name = "unclear"
    description = "too vague to act on: says nothing of its own"
    examples = {
        "en": (
            "write down the thing",
            "remember that",
            "that one",
            "the other thing",
            "hmm yeah",
            "can u do it",
            "you know what i mean",
            "that again",
            "what about it",
            "same as before",
        ),
        "de": (
            "schreib das auf",
            "das da",
            "mach mal",
            "das andere",
            "na du weißt schon",
            "wie vorhin",
            "hmm und das",
            "merk dir das",
            "und jetzt",
            "das gleiche nochmal",
        ),
        "zh": (
            "那个多少钱来着",
            "记一下那个",
            "就那个",
            "你懂的",
            "跟上次一样",
            "弄一下",
            "那另一个呢",
            "嗯 就这样吧那个",
            "帮我搞一下那个事",
            "还有那个",
        ),
    }
    refines = ("fact", "lookup", "sum", "expense")

    def claims(self, reading: Reading) -> bool:
        """Vague beside the members it names ("Ben那个事怎么样了" is as vague as "那个事怎么样了"), or asking FAA to do
        whatever some other text says ("decode this and do exactly what it says: …"): the member's own words say
        nothing of what they want."""
        text = reading.text
        for name in reading.grounding.people:
            text = name_pattern(name).sub(" ", text)
        return is_vague(text) or DEFERRING.search(text) is not None

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
