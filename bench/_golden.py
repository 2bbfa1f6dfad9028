"""The golden set (bench/golden/cases.yaml, and its held-out test split test.yaml): its cases, and what running one
left behind.

A case runs in a fresh household: its seeds are stored, its earlier turns and then its message go the system
path (inbox → arq job → engine → tools → outbox → reply), and the score (`_golden_score`) looks only at what
changed in the database and at the numbers in the replies — never at an LLM's opinion of the answer. The YAML
file's header documents the format; `_golden_run` runs a case and `_golden_time` resolves its times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import yaml
from _golden_numbers import Sources
from _golden_time import check
from dateutil.rrule import rrulestr
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

CASES_FILE = Path(__file__).resolve().parent / "golden" / "cases.yaml"  # the dev split: what the engine is tuned on
TEST_FILE = CASES_FILE.with_name("test.yaml")  # the held-out test split: scored, never tuned against
MEMBERS = ("Anna", "Ben")
LANGUAGES = ("en", "zh", "de")
SIMPLE_RECORD_CATEGORIES = frozenset({"expense", "health", "plan", "fact"})

Member = Literal["Anna", "Ben"]
Recipient = Literal["Anna", "Ben", "household"]
Status = Literal["active", "done", "cancelled"]
EventStatus = Literal["confirmed", "cancelled"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _any_of(values: Any) -> Any:
    """`reply_has`: each item a string or a list of alternatives."""
    return [[item] if isinstance(item, str) else item for item in values] if isinstance(values, list) else values


def _times(value: Any) -> Any:
    listed = _listed(value)
    if isinstance(listed, list):
        for expr in listed:
            check(expr)
    return listed


def _time(value: str | None) -> str | None:
    return value if value is None else check(value)


def _rule(value: str | None) -> str | None:
    if value is not None:
        rrulestr(value.removeprefix("RRULE:"), dtstart=datetime(2026, 1, 1))
    return value


class ExpectedMemory(_Strict):
    kind: list[str] | None = None
    category: list[str] | None = None
    person: list[str] | None = None
    amount: Decimal | None = None
    currency: list[str] | None = None  # one of these ISO codes ("三十五块" may be yuan or euros)
    occurred: Literal["today", "yesterday"] | None = None
    no_amount: bool = False  # true: the row has neither amount nor currency (a fact with numbers that are not money)
    text_has: list[str] | None = None  # its content or merchant has one of these (the member's words kept)
    visibility: Literal["household", "private"] | None = None

    _as_lists = field_validator("kind", "category", "person", "currency", "text_has", mode="before")(_listed)


class ExpectedChange(ExpectedMemory):
    """A live memory whose content or merchant mentions one of `content_has` (now, or before the message) has
    these values."""

    content_has: list[str] = Field(min_length=1)

    _content_has = field_validator("content_has", mode="before")(_listed)


class ExpectedReminder(_Strict):
    at: list[str] | None = None  # any of these time expressions
    recipient: Recipient | None = None
    rrule: str | None = None  # None: a one-off reminder
    text_has: list[str] | None = None  # any of these substrings
    event: bool | None = None  # true: it hangs off a calendar event (moves with it); false: it does not

    _at = field_validator("at", mode="before")(_times)
    _rrule = field_validator("rrule")(_rule)
    _text = field_validator("text_has", mode="before")(_listed)


class ExpectedEvent(_Strict):
    """The one new calendar event."""

    at: list[str] | None = None  # any of these time expressions (its start)
    all_day: bool | None = None
    whose: Recipient | None = None  # Anna | Ben | household
    rrule: str | None = None  # None: not checked
    title_has: list[str] | None = None

    _at = field_validator("at", mode="before")(_times)
    _rrule = field_validator("rrule")(_rule)
    _title = field_validator("title_has", mode="before")(_listed)


class ExpectedReminderStatus(_Strict):
    """The reminders that existed before the message and whose text has one of `text_has`, after it."""

    text_has: list[str] = Field(min_length=1)
    status: list[Status] = Field(min_length=1)  # one of these: a reminder no longer wanted may be cancelled or done
    at: list[str] | None = None
    acknowledged: bool | None = None  # its last firing was marked done ("done", "erledigt")

    _at = field_validator("at", mode="before")(_times)
    _text = field_validator("text_has", mode="before")(_listed)
    _status = field_validator("status", mode="before")(_listed)


class ExpectedEventStatus(_Strict):
    """The calendar events that existed before the message and whose title has one of `title_has`, after it."""

    title_has: list[str] = Field(min_length=1)
    status: EventStatus
    at: list[str] | None = None  # any of these time expressions (its start)

    _at = field_validator("at", mode="before")(_times)
    _title = field_validator("title_has", mode="before")(_listed)


class ExpectedListItem(_Strict):
    """A live item on a shared list: its words have one of `text_has`; the other fields as given."""

    text_has: list[str] = Field(min_length=1)
    list_name: str | None = Field(None, alias="list")  # the list's name (shopping, todo, packing, …)
    quantity: list[str] | None = None  # any of these spellings ("2 kg", "2kg")
    assignee: Member | None = None
    done: bool | None = None

    _text = field_validator("text_has", "quantity", mode="before")(_listed)


class ExpectedBudget(_Strict):
    category: list[str] = Field(min_length=1)
    amount: Decimal
    currency: str

    _category = field_validator("category", mode="before")(_listed)


class Expectation(_Strict):
    clarify: bool = False
    memories: list[ExpectedMemory] | None = None  # None: not checked
    numbers: list[Decimal] = []
    reminders: int | None = None
    changed: list[ExpectedChange] = []
    forgotten: list[str] = []
    kept: list[str] = []
    live_memories: int | None = None
    reminder: ExpectedReminder | None = None
    reminder_list: list[ExpectedReminder] | None = None
    reminder_status: list[ExpectedReminderStatus] = []
    reply_has: list[list[str]] = []
    forbid_numbers: list[Decimal] = []
    only_grounded_numbers: bool = True
    events: int | None = None  # N new calendar events
    event: ExpectedEvent | None = None
    member_forgotten: bool | None = None  # the message made a member forgotten (true) or left every member (false)
    list_items: list[ExpectedListItem] | None = None  # exactly these live list items afterwards; None: not checked
    budgets: list[ExpectedBudget] | None = None  # exactly these budgets afterwards
    event_status: list[ExpectedEventStatus] = []
    writes_nothing: bool = False  # true: no memory, reminder, event, list item, budget or member added or changed
    charts: int | None = None  # N images (charts) sent with the reply; None: not checked

    _reply_has = field_validator("reply_has", mode="before")(_any_of)

    @property
    def about_reminders(self) -> bool:
        """It checks reminder rows beyond their count (which is skipped without the reminder tool, as before)."""
        return bool(self.reminder or self.reminder_list is not None or self.reminder_status)


class Seed(_Strict):
    content: str
    kind: str
    category: str | None = None
    amount: Decimal | None = None
    currency: str | None = None
    person: str | None = None
    merchant: str | None = None
    when: str = "today"
    author: Member = "Anna"
    visibility: Literal["household", "private"] = "household"


class SeedListItem(_Strict):
    list_name: str = Field("shopping", alias="list")
    text: str = Field(min_length=1)
    quantity: str | None = None
    assignee: Member | None = None
    done: bool = False


class SeedBudget(_Strict):
    category: str
    amount: Decimal
    currency: str = "EUR"


class SeedEvent(_Strict):
    title: str = Field(min_length=1)
    at: str  # a time expression; an all-day event takes its day
    all_day: bool = False
    whose: Recipient | None = None  # default: the member who writes the case
    rrule: str | None = None

    _at = field_validator("at")(_time)
    _rrule = field_validator("rrule")(_rule)


class SeedReminder(_Strict):
    text: str = Field(min_length=1)
    at: str | None = None  # required unless fired
    rrule: str | None = None
    recipient: Recipient | None = None  # default: the member who writes the case
    by: Member | None = None  # who set it; default: the member who writes the case
    fired: bool = False  # sent to its recipients 5 minutes before the case starts

    _at = field_validator("at")(_time)
    _rrule = field_validator("rrule")(_rule)

    @model_validator(mode="after")
    def _has_a_time(self) -> SeedReminder:
        if self.at is None and not self.fired:
            raise ValueError("a seed reminder that has not fired needs `at`")
        return self


class Turn(_Strict):
    text: str = Field(min_length=1)
    expect: Expectation | None = None


class Case(_Strict):
    id: str
    category: str
    lang: Literal["en", "zh", "de"] = "en"
    member: Member = "Anna"
    needs: Literal["reminders"] | None = None
    seed: list[Seed] = []
    seed_reminders: list[SeedReminder] = []
    seed_lists: list[SeedListItem] = []
    seed_budgets: list[SeedBudget] = []
    seed_events: list[SeedEvent] = []
    turns: list[Turn] = []
    text: str = Field(min_length=1)
    expect: Expectation

    @property
    def needs_reminders(self) -> bool:
        """Skipped while there is no schedule_reminder tool: it asks for reminders or expects them."""
        expectations = [self.expect, *(turn.expect for turn in self.turns if turn.expect is not None)]
        return self.needs == "reminders" or bool(self.seed_reminders) or any(e.about_reminders for e in expectations)

    @property
    def simple_record(self) -> bool:
        """One message that stores one memory: the path the issue's latency target is about."""
        memories = self.expect.memories
        return (
            self.category in SIMPLE_RECORD_CATEGORIES and not self.turns and memories is not None and len(memories) == 1
        )

    @property
    def messages(self) -> list[tuple[str, Expectation | None]]:
        """The texts in the order they are sent, each with what it must do."""
        return [*((turn.text, turn.expect) for turn in self.turns), (self.text, self.expect)]


def load_cases(path: Path = CASES_FILE) -> list[Case]:
    cases = []
    for number, item in enumerate(yaml.safe_load(path.read_text())["cases"], 1):
        try:
            cases.append(Case.model_validate(item))
        except ValidationError as exc:
            raise ValueError(f"{path}: case {number} ({item.get('id', '?')}): {exc}") from None
    ids = [case.id for case in cases]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate case ids in {path}")
    return cases


# ---------------------------------------------------------------------------------------------------- results


@dataclass
class Snapshot:
    """The household's memories, reminders, events, forgotten members, list items and budgets at one moment, as plain
    rows."""

    memories: list[dict[str, Any]] = field(default_factory=list)
    reminders: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    forgotten: int = 0  # members forgotten ("forget everything about me")
    list_items: list[dict[str, Any]] = field(default_factory=list)  # live (not cleared) items
    budgets: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Effects:
    """What one message did: its reply and outcome, the rows it created, the household before and after, the
    sources its reply's numbers may come from, and its cost."""

    reply: str
    outcome: str
    memories: list[dict[str, Any]]  # live memories it created
    reminders: int | None  # reminders it created; None: there is no schedule_reminder tool
    llm_calls: int
    latency_s: float
    error: str | None = None
    sent_at: datetime | None = None  # on the virtual clock
    new_reminders: list[dict[str, Any]] = field(default_factory=list)
    before: Snapshot = field(default_factory=Snapshot)
    after: Snapshot = field(default_factory=Snapshot)
    sources: Sources = field(default_factory=Sources)
    route: str = "-"
    charts: int = 0  # images sent with the reply
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_evaluated: int | None = None


@dataclass
class CaseResult:
    case: Case
    effects: Effects | None  # the last message's
    passed: bool
    skipped: bool = False
    reasons: list[str] = field(default_factory=list)
    messages: list[Effects] = field(default_factory=list)  # every message's, turns first
    invented: list[list[str]] = field(default_factory=list)  # per message: the numbers no source holds

    @property
    def route(self) -> str:
        return self.effects.route if self.effects is not None else "-"
