"""Routes that store what a member tells: money (expenses and income) and everything else worth remembering
(health notes, plans, facts). The amounts, currencies and dates come from the grounding; the model names the
category, the kind and who it is about."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from engine.analysis import PlannedCall
from engine.executor import StepResult
from engine.grounding import Money
from engine.grounding.money import home_currency
from engine.routes.cues import CONTACT_DETAILS, DOSE
from engine.routes.phrases import say, when_text
from engine.routes.route import Ask, Situation
from engine.routes.router import says_what
from tools.storage import memories as stored

Label = Annotated[str, StringConstraints(strip_whitespace=True, to_lower=True, min_length=1, max_length=30)]
Short = Annotated[str, StringConstraints(strip_whitespace=True, max_length=60)]
# A plan the whole family has: "we", "the family", "wir", "我们", "全家".
_WE = re.compile(r"\b(?:we|we're|us|our|the family|everyone|wir|uns|unsere?)\b|我们|全家|大家", re.I)


def _slug(value: str) -> str:
    return "-".join(value.replace("_", " ").split())[:30] or "other"


class OneAmount(BaseModel):
    """The answer for a message with one amount: its content is the message itself."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["expense", "income"]
    category: Annotated[Label, AfterValidator(_slug)]
    merchant: Short | None = None


class MoneyItem(OneAmount):
    what: Short = Field(description="a few words in the member's language: what it was for")


class MoneyAnswer(BaseModel):
    """The answer for a message with several amounts: one item each, in order."""

    model_config = ConfigDict(extra="forbid")

    items: list[MoneyItem] = Field(min_length=1, max_length=10)


def _items(answer: BaseModel | None, count: int) -> list[OneAmount]:
    """One item per amount, in order; a model that gave fewer items names the rest like its last one."""
    if isinstance(answer, MoneyAnswer):
        items: list[OneAmount] = list(answer.items)
    else:
        assert isinstance(answer, OneAmount)  # the route's schema is one or the other (`schema` below)
        items = [answer]
    return [*items, *[items[-1]] * (count - len(items))][:count]


class ExpenseRoute:
    name = "expense"

    async def prepare(self, situation: Situation) -> Ask | None:
        money = situation.grounding.money
        if not money:
            vague = len(situation.text.split()) <= 4 or len(situation.text) <= 8
            return Ask(say("ask_what_amount" if vague else "ask_amount", situation.language))
        if not says_what(situation.text, [m.text for m in money]):  # "paid 50": for what?
            return Ask(say("ask_what_for", situation.language, amount=_money_text(money[0], situation)))
        if any(m.currency is None for m in money):
            run = situation.run
            async with run.transaction() as conn:
                usual = await stored.usual_currency(conn, run.message.household_id)
            me = next((m for m in run.members if m.id == run.message.user_id), None)
            if usual is None and me is not None:
                usual = home_currency(me.locale, run.timezone, run.deps.clock.now().date())
            if usual is None:
                first = next(m for m in money if m.currency is None)
                return Ask(say("ask_currency", situation.language, amount=first.amount), ("EUR", "USD", "GBP", "CNY"))
            situation.choices["currency"] = [usual]
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel]:
        return OneAmount if len(situation.grounding.money) == 1 else MoneyAnswer

    def prompt(self, situation: Situation) -> str:
        amounts = "; ".join(_money_text(m, situation) for m in situation.grounding.money)
        return f"Amounts: {amounts} | Message: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        money = situation.grounding.money
        calls = []
        for number, (item, amount) in enumerate(zip(_items(answer, len(money)), money, strict=True), 1):
            args = {
                "content": f"{item.what}: {_money_text(amount, situation)}"
                if isinstance(item, MoneyItem)
                else situation.text,
                "kind": item.kind,
                "category": item.category,
                "amount": str(amount.amount),
                "currency": amount.currency or situation.choices["currency"][0],
            }
            if item.merchant:
                args["merchant"] = item.merchant
            when = occurred(situation)
            if when is not None:
                args["occurred_at"] = when
            calls.append(PlannedCall(id=f"s{number}", tool="store", args=args))
        return calls

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        lines = []
        for item, result in zip(_items(answer, len(results)), results, strict=False):
            if result.ok and result.result:
                amount = f"{result.result.get('amount')} {result.result.get('currency')}"
                what = item.what if isinstance(item, MoneyItem) else _what(item, situation)
                lines.append(say("saved_money", situation.language, what=what, amount=amount))
        return "\n".join(lines)


class FactAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["health", "plan", "fact", "contact", "shopping", "note"]
    person: Short | None = Field(None, description="who it is about, as written; null for the writer or nobody")
    category: Annotated[Label, AfterValidator(_slug)]


class FactRoute:
    name = "fact"

    async def prepare(self, situation: Situation) -> Ask | None:
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel]:
        return FactAnswer

    def prompt(self, situation: Situation) -> str:
        return f"Message: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        assert isinstance(answer, FactAnswer)
        kind = checked_kind(answer.kind, situation.text)
        args: dict[str, object] = {"content": situation.text, "kind": kind, "category": answer.category}
        if answer.person:
            args["person"] = answer.person
        when = occurred(situation)
        if when is not None:
            args["occurred_at"] = when
        calls = [PlannedCall(id="s1", tool="store", args=args)]
        event = planned_event(situation, kind, answer.person)
        return [*calls, PlannedCall(id="s2", tool="add_event", args=event)] if event else calls

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok:
            return ""
        added = results[1].result if len(results) > 1 and results[1].ok else None
        if added:
            start = str(added["start"])
            at = datetime.fromisoformat(start if len(start) > 10 else start + "T00:00").replace(tzinfo=None)
            when = when_text(at, situation.language, with_time=len(start) > 10)
            return say("saved_event", situation.language, what=_clip(situation.text), when=when)
        return say("saved", situation.language, what=_clip(situation.text))


def checked_kind(kind: str, text: str) -> str:
    """The model's kind, held against the message's own evidence: a dose of a medicine is a health note, and a
    note is a contact only when it holds a number, an address or a link to reach someone by."""
    if DOSE.search(text):
        return "health"
    if kind == "contact" and not CONTACT_DETAILS.search(text):
        return "fact"
    return kind


_NOT_EVENTS = frozenset({"contact", "shopping"})


def planned_event(situation: Situation, kind: str, person: str | None) -> dict[str, object] | None:
    """The calendar event a told plan makes: a coming moment (a time, or a day for an all-day event) or a
    repetition, for the member it names, the household ("we", "the family") or the writer; None for anything else."""
    if kind in _NOT_EVENTS:
        return None
    grounding = situation.grounding
    today = situation.run.deps.clock.now().astimezone(ZoneInfo(situation.run.timezone)).replace(tzinfo=None)
    args: dict[str, object] = {"title": _clip(situation.text, 120), "whose": _whose(situation, person)}
    if grounding.repeats:
        repeat = grounding.repeats[0]
        return {**args, "start": repeat.first.isoformat(timespec="minutes"), "rrule": repeat.rrule}
    coming = [m for m in grounding.moments if (m.at >= today if m.has_time else m.at.date() > today.date())]
    if not coming:
        return None
    moment = coming[0]
    start = moment.at.isoformat(timespec="minutes") if moment.has_time else moment.at.date().isoformat()
    return {**args, "start": start}


def _whose(situation: Situation, person: str | None) -> str:
    named = [m.name for m in situation.run.members if person and m.name.lower() == person.lower()]
    if named:
        return named[0]
    if _WE.search(situation.text):
        return "household"
    return "self"


def _what(item: OneAmount, situation: Situation) -> str:
    return f"{item.category} ({item.merchant})" if item.merchant else item.category


def occurred(situation: Situation) -> str | None:
    """When the stored thing happens: the first moment the message names, on the member's clock; None for now."""
    moments = situation.grounding.moments
    if not moments:
        return None
    moment = moments[0]
    return moment.at.isoformat(timespec="minutes") if moment.has_time else moment.at.date().isoformat()


def _money_text(money: Money, situation: Situation) -> str:
    currency = money.currency or (situation.choices.get("currency") or [""])[0]
    return f"{money.amount} {currency}".strip()


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
