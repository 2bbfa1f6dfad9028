"""Routes that change what was stored: correct a memory ("the Rewe receipt was 24.80, not 42.80") and forget one
("forget the wifi password"). The engine finds the rows the message may point at — what the member stored a moment
ago, rows with the amounts it names, rows like its words — and offers them with their ids; the model picks."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from engine.analysis import PlannedCall
from engine.executor import StepResult
from engine.grounding import Moment
from engine.routes.phrases import say
from engine.routes.questions import notes_text, quote, search_rows
from engine.routes.records import Label, _slug
from engine.routes.route import Ask, Picked, Reroute, Said, Situation
from tools.memories import recall
from tools.storage import memories as stored

_MAX_ROWS = 6


async def candidate_rows(situation: Situation) -> list[dict[str, Any]]:
    """The memories the message may point at, likeliest first: those with an amount it names, those the member's
    last messages stored, then those nearest to its words."""
    run = situation.run
    message = run.message
    numbers = [str(n) for n in situation.grounding.numbers]
    rows: list[dict[str, Any]] = []
    async with run.transaction() as conn:
        ctx = run.tool_context(conn)
        if numbers:
            registry = run.deps.registry
            args = registry.validate(
                "search", {"filter": {"field": "amount", "op": "in", "value": numbers[:10]}, "limit": 5}
            )
            found = await registry.run(ctx, "search", args)
            rows += found.get("memories", [])
        last = await stored.last_stored_ids(conn, message.household_id, message.user_id, message.inbox_id)
        situation.recent = last
        rows += [m.model_dump(mode="json", exclude_none=True) for m in await recall(ctx, last[:3])]
    rows += await search_rows(situation, situation.text, limit=_MAX_ROWS)
    unique: dict[int, dict[str, Any]] = {}
    for row in rows:
        unique.setdefault(int(row["memory_id"]), row)
    return list(unique.values())[:_MAX_ROWS]


class UpdateAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_id: Annotated[int, Picked]
    amount: Annotated[str | None, Picked] = None
    category: Annotated[Label, AfterValidator(_slug)] | None = None
    time: Annotated[str | None, Picked] = None
    content: Annotated[str, StringConstraints(strip_whitespace=True, max_length=300)] | None = Field(
        default=None, description="the corrected note as one sentence, when words change rather than numbers"
    )


class UpdateRoute:
    name = "update"

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        situation.rows = await candidate_rows(situation)
        if not situation.rows:
            # Nothing stored to correct: "the wifi password changed to X" is news to keep.
            return Reroute("expense" if situation.grounding.money else "fact")
        situation.choices["memory_id"] = [int(row["memory_id"]) for row in situation.rows]
        situation.choices["amount"] = [str(n) for n in situation.grounding.numbers]
        situation.choices["time"] = [m.key for m in situation.grounding.moments]
        situation.decided = _plain_correction(situation)
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return None if situation.decided is not None else UpdateAnswer

    def prompt(self, situation: Situation) -> str:
        numbers = ", ".join(situation.choices["amount"]) or "-"
        moments = situation.grounding.moments
        times = " | times: " + "; ".join(f"{m.key}={m.at:%a %Y-%m-%d} ({m.text})" for m in moments) if moments else ""
        return f"Entries: {notes_text(situation.rows)}\nNumbers: {numbers}{times} | Message: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        answer = answer or situation.decided
        assert isinstance(answer, UpdateAnswer)
        row = next(r for r in situation.rows if int(r["memory_id"]) == answer.memory_id)
        args: dict[str, Any] = {"memory_id": answer.memory_id}
        amount = _new_amount(answer.amount, row, situation.choices["amount"])
        if amount is not None:
            args["amount"] = amount
            money = next((m for m in situation.grounding.money if str(m.amount) == amount and m.currency), None)
            if money is not None and money.currency != row.get("currency"):
                args["currency"] = money.currency
        named = [code for code in situation.grounding.currencies if code != row.get("currency")]
        if "currency" not in args and row.get("currency") and len(named) == 1:
            args["currency"] = named[0]  # "it was dollars, not euros"
        if answer.category and answer.category != row.get("category"):
            args["category"] = answer.category
        moment = _new_moment(answer, row, situation, new_amount=amount is not None)
        if moment is not None:
            args["occurred_at"] = moment.at.isoformat(timespec="minutes") if moment.has_time else str(moment.at.date())
        if answer.content and answer.content != row.get("content") and len(args) == 1:
            args["content"] = answer.content  # only when nothing more exact changes: a rewrite loses the original
        if len(args) == 1:
            return Ask(say("ask_what", situation.language))
        return [PlannedCall(id="s1", tool="update_memory_fields", args=args)]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        return say("updated", situation.language, what=quote(results[0].result))


def _plain_correction(situation: Situation) -> UpdateAnswer | None:
    """A correction of an amount the engine can settle alone: one stored row has one of the numbers the message
    names and one other number is named ("24.80, not 42.80"), or the member's last message stored one amount and
    this one names one new number ("不对，是54块")."""
    numbers = list(situation.grounding.numbers)
    matching = [row for row in situation.rows if _amount(row) in numbers]
    if len(matching) == 1:
        others = [n for n in numbers if n != _amount(matching[0])]
        if len(others) == 1:
            return UpdateAnswer(memory_id=int(matching[0]["memory_id"]), amount=str(others[0]))
    recent = [row for row in situation.rows if int(row["memory_id"]) in situation.recent[:1] and _amount(row)]
    if not matching and len(recent) == 1 and len(numbers) == 1:
        return UpdateAnswer(memory_id=int(recent[0]["memory_id"]), amount=str(numbers[0]))
    return None


def _new_moment(answer: UpdateAnswer, row: dict[str, Any], situation: Situation, *, new_amount: bool) -> Moment | None:
    """The time the entry moves to: the model's choice unless it is the entry's day already; or, when nothing else
    changes, the one time the message names that is not the entry's day ("it was yesterday, not today", read
    either way round)."""
    moments = situation.grounding.moments
    day = str(row.get("occurred_at") or "")[:10]
    if answer.time:
        chosen = next(m for m in moments if m.key == answer.time)
        if chosen.at.date().isoformat() != day:
            return chosen
    elif new_amount or answer.category is not None:
        return None
    other = [m for m in moments if m.at.date().isoformat() != day]
    return other[0] if len(other) == 1 else None


def _amount(row: dict[str, Any]) -> Decimal | None:
    return Decimal(str(row["amount"])) if row.get("amount") is not None else None


def _new_amount(chosen: str | None, row: dict[str, Any], numbers: list[str]) -> str | None:
    """The corrected amount: the model's choice unless it is the old amount itself, in which case the other number
    named ("24.80, not 42.80" read backwards)."""
    if chosen is None:
        return None
    old = row.get("amount")
    if old is not None and Decimal(chosen) == Decimal(str(old)):
        others = [n for n in numbers if Decimal(n) != Decimal(str(old))]
        return others[0] if len(others) == 1 else None
    return chosen


class ForgetAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_ids: Annotated[list[int], Picked] = Field(min_length=1, max_length=3)


class ForgetRoute:
    name = "forget"

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        situation.rows = await candidate_rows(situation)
        if not situation.rows:
            return Said(say("not_found", situation.language))
        situation.choices["memory_ids"] = [int(row["memory_id"]) for row in situation.rows]
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel]:
        return ForgetAnswer

    def prompt(self, situation: Situation) -> str:
        return f"Entries: {notes_text(situation.rows)}\nMessage: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        assert isinstance(answer, ForgetAnswer)
        return [PlannedCall(id="s1", tool="forget", args={"memory_ids": sorted(set(answer.memory_ids))})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        gone = set(results[0].result.get("forgotten", []))
        rows = [row for row in situation.rows if int(row["memory_id"]) in gone]
        if not rows:
            return say("not_found", situation.language)
        return say("forgotten", situation.language, what=" | ".join(quote(row) for row in rows))


class UndoRoute:
    """Take back the member's latest change; nothing for the model to choose."""

    name = "undo"

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return None

    def prompt(self, situation: Situation) -> str:
        return ""

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        return [PlannedCall(id="s1", tool="undo", args={})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        undone = results[0].result.get("undone") or []
        if not undone:
            return say("nothing_to_undo", situation.language)
        return say("undone", situation.language, what="; ".join(str(line) for line in undone))
