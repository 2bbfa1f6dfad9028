"""What a capability is: one kind of thing a family asks FAA to do, said in one module — its name and description
(for the router's choice), examples in every language (for routing by the nearest examples), the cues that claim a
message for it outright and the hints that only lean towards it, the capabilities it refines, the tools it calls,
its consent policy, the instructions of its one model call, its small answer schema (whose choices come from the
grounding and the household's rows), the tool calls it builds from that answer, and the reply it writes from the
tools' results."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ValidationInfo

from engine.grounding import Grounding

if TYPE_CHECKING:
    from engine.analysis import PlannedCall
    from engine.context import History
    from engine.executor import StepResult
    from engine.run import Run


@dataclass(frozen=True)
class Ask:
    """A question back to the member instead of guessing; the route resumes with the answer."""

    question: str
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class Said:
    """A reply the route can give at once: nothing to run, nothing to ask (e.g. "you have no reminders")."""

    text: str


@dataclass(frozen=True)
class Reroute:
    """The message belongs to another capability after all (a "correction" with nothing stored to correct is news)."""

    capability: str


@dataclass
class Situation:
    """One message on its route: what it says, what was resolved, and the rows the route read for it."""

    run: Run
    text: str  # the member's words (with the earlier message when they answer a question)
    grounding: Grounding
    history: History
    rows: list[dict[str, Any]] = field(default_factory=list)  # memories or reminders the message may point at
    choices: dict[str, list[Any]] = field(default_factory=dict)  # what the model may pick, by answer field
    recent: list[int] = field(default_factory=list)  # memories the member's last messages stored, newest first
    decided: BaseModel | None = None  # an answer the engine settled without the model
    guessed: bool = False  # the plan acts on the model's pick, not on what the words name: it waits for a yes

    @property
    def language(self) -> str:
        return self.grounding.language


LANGUAGES = ("en", "de", "zh")
Consent = Literal["none", "bulk", "always"]  # when a yes is needed: never, for several rows or "everything", always


@dataclass(frozen=True)
class Reading:
    """What routing reads off a message before any capability runs."""

    text: str
    grounding: Grounding
    question: bool  # the words ask something ("how much…", "…?", "吗")
    reminder_just_sent: bool  # FAA sent the member a reminder moments ago ("done" is said of it)
    quoted: str = ""  # words quoted from someone else, which `text` is read without


class Capability:
    """A capability. `claims` is decisive: a message its cues claim goes to it unless a capability that `refines` it
    claims the message too ("*" refines every other). `hint` only leans: it adds to the nearest examples' score
    when no cue decides."""

    name: ClassVar[str]
    description: ClassVar[str]  # one line, for the router's choice
    examples: ClassVar[Mapping[str, tuple[str, ...]]]  # by language: messages families send, casual forms included
    refines: ClassVar[tuple[str, ...]] = ()
    tools: ClassVar[tuple[str, ...]] = ()  # the tools its plans call, checked against the registry at start
    consent: ClassVar[Consent] = "none"
    asks: ClassVar[bool | None] = None  # True: only questions are scored for it; False: only statements
    needs_cue: ClassVar[bool] = False  # only its own cues choose it: it schedules, records money or changes rows
    instructions: ClassVar[str] = ""  # the system prompt's own part of its model call; "" when it never calls one
    # The answer's field of free text the member reads as the reply (small talk's): shown as the model writes it.
    # Replies made from phrase templates have none, and appear whole.
    written: ClassVar[str | None] = None

    def claims(self, reading: Reading) -> bool:
        return False

    def hint(self, reading: Reading) -> float:
        return 0.0

    def eligible(self, reading: Reading) -> bool:
        """Whether its examples' nearness may choose it for a message no cue claims: not when it schedules, records
        money or changes rows (`needs_cue`)."""
        return not self.needs_cue

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        """Read what the capability needs (rows, categories); ask when a required slot is missing, answer at once,
        or hand the message to another capability."""
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        """The model's answer for this message, or None when no model call is needed."""
        return None

    def prompt(self, situation: Situation) -> str:
        """The per-message part of the prompt, after the instructions."""
        return ""

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        """The tool calls the answer means, every argument filled by the engine."""
        return []

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        """The reply, written from the tools' results."""
        return ""


def pick(value: Any, info: ValidationInfo) -> Any:
    """Validate a field against the choices offered for this message (the validation context's `choices`)."""
    offered = (info.context or {}).get("choices", {}).get(info.field_name)
    if offered is None or value is None:
        return value
    items = value if isinstance(value, list) else [value]
    unknown = [item for item in items if item not in offered]
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not one of {offered}")
    return value


Picked = AfterValidator(pick)  # a field whose value must be one of the choices offered for this message


def constrained_schema(model: type[BaseModel], choices: dict[str, list[Any]]) -> dict[str, Any]:
    """The model's JSON schema with every field required (a grammar-constrained model may otherwise stop early)
    and each field in `choices` limited to those values (in arrays, each item; no values: an empty array)."""
    schema = model.model_json_schema()
    for part in (schema, *schema.get("$defs", {}).values()):
        part.pop("title", None)
        for name, prop in part.get("properties", {}).items():
            prop.pop("title", None)
            prop.pop("default", None)
            if name in choices:
                _limit(prop, list(choices[name]))
        if "properties" in part:
            part["required"] = list(part["properties"])
            part["additionalProperties"] = False
    return schema


def _limit(prop: dict[str, Any], values: list[Any]) -> None:
    is_array = prop.get("type") == "array"
    target = prop["items"] if is_array else prop
    nullable = any(option.get("type") == "null" for option in target.get("anyOf", ())) or "null" in (
        target.get("type") or ()
    )
    if is_array and not values:
        prop["maxItems"] = 0
        return
    for key in ("anyOf", "type", "maxLength", "minLength", "pattern"):
        target.pop(key, None)
    target["enum"] = [*values, None] if nullable else values
    if is_array:
        prop["maxItems"] = min(prop.get("maxItems", len(values)), len(values))
        if prop.get("minItems", 0) > len(values):
            del prop["minItems"]
