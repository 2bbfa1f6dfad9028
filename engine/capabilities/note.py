"""Anything else worth remembering: health notes, plans, facts, codes, sizes. A told plan with a coming time (or a
repetition) also goes into the calendar."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from engine.analysis import PlannedCall
from engine.capabilities._records import Label, Short, checked_kind, clip, occurred, planned_event, slug
from engine.capabilities.capability import Ask, Capability, Reading, Situation
from engine.capabilities.phrases import say, when_text
from engine.capabilities.words import (
    BODY,
    CONTACT_DETAILS,
    DOING,
    DOSE,
    RECORD_ASKED,
    RECORD_VERB,
    cues,
    says_what,
)
from engine.executor import StepResult
from engine.grounding.language import name_pattern

# Asked to put something in the calendar: a plan to note, which becomes an event — not a look at what is on.
CALENDAR_ADD = cues(
    r"\b(?:put|add|pop|stick|write|enter|schedule|book)\b.{0,60}\b(?:on|in|into|to)\s+(?:the|my|our)\s+"
    r"(?:family\s+)?(?:calendar|diary|schedule)\b",
    r"\b(?:trag|schreib|setz)\w*\b.{0,60}\b(?:in den|in unseren|in meinen) kalender\b|\bim kalender eintragen\b",
    r"(?:加|记|放|写)(?:到|进|在)?(?:日历|日程)",
)


def _bodily(text: str) -> bool:
    return BODY.search(text) is not None or DOSE.search(text) is not None


class FactAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["health", "plan", "fact", "contact", "note"]
    person: Short | None = Field(None, description="who it is about, as written; null for the writer or nobody")
    category: Annotated[Label, AfterValidator(slug)]


INSTRUCTIONS = """\
You keep a family's notes. Classify what the member tells you:
- kind: "health" (illness, symptoms, medicine, doctor's advice, allergies, vaccines, growth and body measurements),
  "plan" (appointments, events, trips, lessons, things someone will do at a time), "contact" (phone numbers,
  addresses, people to call), "fact" (anything else to remember: sizes, passwords, preferences, where things are,
  prices and quotes), "note" (a general note).
- person: the person it is about, as written (a name like "Tom" or a relation like "妈妈"); null when it is about
  the writer or nobody in particular.
- category: one lowercase English word for the topic, e.g. allergy, fever, vaccine, dentist, school, travel, wifi.
Examples:
Message: Tom is allergic to peanuts → {"kind":"health","person":"Tom","category":"allergy"}
Message: the doctor says Mia needs glasses → {"kind":"health","person":"Mia","category":"eyes"}
Message: 小明每周三下午四点上钢琴课 → {"kind":"plan","person":"小明","category":"piano"}
Message: Lea's shoe size is 38 now → {"kind":"fact","person":"Lea","category":"clothing"}
Message: Der WLAN-Code ist sunflower → {"kind":"fact","person":null,"category":"wifi"}
Message: Parent-teacher meeting next Tuesday at 5 pm → {"kind":"plan","person":null,"category":"school"}
"""


class Note(Capability):
    name = "fact"
    instructions = INSTRUCTIONS
    description = "something to remember: health, plans, appointments, facts, codes, sizes"
    examples = {
        "en": (
            "Tom is allergic to peanuts",
            "the pediatrician said she is 104 cm",
            "dentist for ben on friday at 3pm",
            "the shed alarm code is 4711",
            "mia had 38.5 fever this morning, gave her ibuprofen",
            "fyi the new door code is 2580",
            "lea's a size 32 in shoes now",
            "grandpa's in ward 4 room 12",
            "ben got his flu jab today",
            "bin day changes to thursday from next month",
            "the plumber's number is 0176 5551234",
            "mia's been coughing since monday, worse at night",
            "school photos on the 9th, kids need white shirts",
        ),
        "de": (
            "Der Code fürs Garagentor ist 4711",
            "Lena hat Schuhgröße 31",
            "Samstag gehen wir zu Oma",
            "neues wlan passwort is blume2026",
            "tom hat heute seine tetanus impfung gekriegt",
            "mia hat seit gestern 39 fieber, paracetamol gegeben",
            "opa liegt auf station 3 zimmer 214",
            "ab januar kommt die müllabfuhr mittwochs",
            "nummer vom klempner: 0171 2345678",
            "ben verträgt kein penicillin",
            "elternabend am 12. um 19 uhr",
            "mia ist jetzt 1,08 groß laut kinderarzt",
        ),
        "zh": (
            "小明每周三下午四点上钢琴课",
            "周六去奶奶家",
            "家里wifi密码是abc123",
            "小红现在穿33码的鞋",
            "爷爷住在3号楼502病房",
            "小宝今天打了流感疫苗",
            "老公对海鲜过敏",
            "孩子昨晚烧到38度7 吃了退烧药",
            "下个月起周四收垃圾",
            "物业电话是86001234",
            "学校下周三拍集体照 要穿白衬衫",
            "储物间的锁密码是0915",
        ),
    }
    tools = ("store", "add_event")
    asks = False

    def claims(self, reading: Reading) -> bool:
        text = reading.text
        if CALENDAR_ADD.search(text) and reading.grounding.moments:  # "can you put the play on the calendar …"
            return True
        return RECORD_ASKED.search(text) is not None or (
            not reading.question and bool(RECORD_VERB.search(text) or DOSE.search(text) or CONTACT_DETAILS.search(text))
        )

    def hint(self, reading: Reading) -> float:
        return 0.2

    async def prepare(self, situation: Situation) -> Ask | None:
        if not worth_noting(situation):
            return Ask(say("ask_what", situation.language))
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel]:
        return FactAnswer

    def prompt(self, situation: Situation) -> str:
        return f"Message: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        assert isinstance(answer, FactAnswer)
        kind = checked_kind(answer.kind, situation)
        args: dict[str, object] = {"content": situation.text, "kind": kind, "category": answer.category}
        if answer.person:
            args["person"] = answer.person
        event = planned_event(situation, kind, answer.person)
        timed = event is not None and "T" in str(event["start"])
        if timed and (kind in ("fact", "note") or (kind == "health" and not _bodily(situation.text))):
            args["kind"] = "plan"  # "samstag um 15 uhr kindergeburtstag": a time to be somewhere, nothing of the body
        when = occurred(situation)
        if when is not None:
            args["occurred_at"] = when
        calls = [PlannedCall(id="s1", tool="store", args=args)]
        return [*calls, PlannedCall(id="s2", tool="add_event", args=event)] if event else calls

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok:
            return ""
        added = results[1].result if len(results) > 1 and results[1].ok else None
        if added:
            start = str(added["start"])
            at = datetime.fromisoformat(start if len(start) > 10 else start + "T00:00").replace(tzinfo=None)
            when = when_text(at, situation.language, with_time=len(start) > 10)
            return say("saved_event", situation.language, what=clip(situation.text), when=when)
        return say("saved", situation.language, what=clip(situation.text))


def worth_noting(situation: Situation) -> bool:
    """Beside words of when and doing (`DOING`), numbers, clock times and the members it names, the message says
    something to remember: "tomorrow 5pm", "明天下午三点", "42" and "same for ben pls" do not (of what?); "ben hat
    mittwochs training" does."""
    said = _CLOCK.sub(" ", situation.text)
    for member in situation.run.members:
        said = name_pattern(member.name).sub(" ", said)
    return says_what(DOING.sub(" ", said), [])


_CLOCK = cues(r"[零〇一二两三四五六七八九十\d]+(?:点|點|号|號|分|刻)[半钟鐘]?")
