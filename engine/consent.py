"""Writes the member did not ask for wait for their yes: a plan that changes things in answer to a question, changes
or forgets more than one row at once, or changes or forgets anything when the message asked for no such thing
(a stored text saying "forget everything" must not be able to make the model do it). Some always wait, whatever
the message and whatever the household holds: forgetting the member (`forget_me`) and forgetting in bulk (more than
one row, or "everything"). The plan is kept with the question and runs, unchanged and without the model, when the
member says yes.

A change or forget of one row the member asked for, when their words fit several alike rows and name none apart
("forget the groceries expense" with two of them), waits for them to pick the row (`Which`); the kept plan then runs
against the row picked.

The same rule holds in every step the model writes in: the plan of its analysis (`Gate.before`), a
re-planned step and a tool call it makes while writing the reply (`Gate`: such a call is held, the model is told
it was not done, and the reply ends with the question).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import structlog

from engine import privacy
from engine.analysis import PlannedCall
from engine.capabilities import routing
from engine.capabilities._memories import quote, which_one
from engine.capabilities.capability import Ask, Situation
from engine.capabilities.correction import UPDATE
from engine.capabilities.forget import FORGET
from engine.capabilities.phrases import say
from engine.capabilities.reminder_change import CANCEL, MOVE
from engine.capabilities.undo import UNDO
from engine.capabilities.words import QUESTION
from engine.domain import Reply
from engine.executor import StepResult, run_plan
from engine.grounding import Grounding
from engine.grounding.language import language_of
from engine.replies import basic_answer
from engine.run import Run
from tools.storage.interactions import PendingClarification

log = structlog.get_logger()

_DESTRUCTIVE = frozenset({"forget", "update_memory_fields", "cancel_reminder", "restore", "cancel_event"})
# Asked for every time, whoever planned it: there is no undo for it.
ALWAYS_ASK = frozenset({"forget_me"})
_MAX_ROWS = 3
_BULK = frozenset({"forget"})  # forgetting more than one row at once always asks
_ONE_ROW = frozenset({"forget", "update_memory_fields"})  # the tools whose step names the memory it changes
_EVERYTHING = re.compile(
    r"\b(?:everything|all (?:of )?(?:my|our|the|your|that|those|these|it|them|memories|notes|entries|data)|"
    r"all\b\W*$|alles|sämtliche)\b|全部|所有|一切|统统|都(?:删|忘)",
    re.IGNORECASE,
)
_CHANGES = {  # no ids: they mean nothing to the member
    "update_memory_fields": {"en": "change this memory", "de": "diesen Eintrag ändern", "zh": "修改这条记录"},
    "cancel_reminder": {"en": "cancel this reminder", "de": "diese Erinnerung löschen", "zh": "取消这个提醒"},
}
# Without the count: a number in a reply must come from the member's words or the household's rows.
_FORGET = {
    "en": ("forget this memory", "forget several memories"),
    "de": ("diesen Eintrag vergessen", "mehrere Einträge vergessen"),
    "zh": ("删除这条记录", "删除多条记录"),
}
# What the model reads in place of a held call's result: it was not done, and the member decides.
HELD = (
    "not done: this change waits for the member's yes (or for them to pick which entry they mean), which FAA asks "
    "for after your reply. Do not say it was done, and do not call it again."
)
_YES = re.compile(
    r"^\W*(?:yes|yeah|yep|ok|okay|sure|go ahead|do it|please do|confirm|ja|jawohl|klar|mach)\b"
    r"|^\W*(?:好的?|是的?|确认|可以|行|对)",
    re.IGNORECASE,
)
_NO = re.compile(r"^\W*(?:no|nope|don'?t|cancel|stop|nein|lass|不|不要|别|取消)", re.IGNORECASE)


def unasked(plan: list[PlannedCall], text: str, grounding: Grounding, writes: frozenset[str]) -> list[PlannedCall]:
    """The steps of `plan` that need the member's yes first."""
    route = routing.decisive(routing.reading(text, grounding))
    asked_to_change = any(cue.search(text) for cue in (FORGET, UPDATE, CANCEL, MOVE, UNDO))
    question = route in ("sum", "lookup") or (QUESTION.search(text) is not None and not asked_to_change)
    risky = []
    for step in plan:
        if step.tool not in writes:
            continue
        destructive = step.tool in _DESTRUCTIVE
        if question or (destructive and not asked_to_change) or _rows(step) > _MAX_ROWS:
            risky.append(step)
        elif must_ask([step], text):
            risky.append(step)
    return risky


def must_ask(plan: list[PlannedCall], text: str) -> list[PlannedCall]:
    """The steps of `plan` that wait for a yes whatever the message asked: forgetting the member, and forgetting
    more than one row or "everything" (`text`: the message), however few rows the household holds."""
    return [
        step
        for step in plan
        if step.tool in ALWAYS_ASK or (step.tool in _BULK and (_rows(step) > 1 or _EVERYTHING.search(text)))
    ]


@dataclass(frozen=True)
class Which:
    """The rows a message could mean when it fits several alike ones and names none apart; a step that changes or
    forgets one memory waits for the member to pick one of `rows` (option, the row as quoted → its memory_id)."""

    question: str
    rows: dict[str, int]

    @classmethod
    def of(cls, situation: Situation) -> Which | None:
        """The rows to pick from, as the routed capabilities judge them alike (`which_one`); None when the message
        names its rows apart, or fits at most one."""
        named = which_one(situation) if situation.rows else None
        if not isinstance(named, Ask):
            return None
        ids = {quote(row): int(row["memory_id"]) for row in situation.rows}
        return cls(named.question, {option: ids[option] for option in named.options})

    def pointing(self, plan: list[PlannedCall]) -> list[PlannedCall]:
        """The steps of `plan` that change or forget one memory: which one is the member's to say."""
        return [step for step in plan if step.tool in _ONE_ROW and _rows(step) == 1]

    def ask(self, run: Run, plan: list[PlannedCall], text: str) -> tuple[Reply, PendingClarification]:
        """Ask which row the member means, keeping the plan with the question."""
        log.info("plan.which.requested", rows=len(self.rows))
        run.note("plan.which.requested", tools=[step.tool for step in self.pointing(plan)])
        pending = PendingClarification(
            inbox_id=run.message.inbox_id,
            question=self.question,
            options=list(self.rows),
            state={"text": text[:2000], "consent": [step.model_dump() for step in plan], "which": self.rows},
        )
        return Reply(self.question, "clarifying", options=tuple(self.rows)), pending


@dataclass
class Gate:
    """The consent rule for the writes the model makes within one message: its analysis's plan (`before`), and
    after it a re-planned step or a tool call while writing the reply. A step that needs a yes, or the member's
    pick of the row it changes (`which`), is held (`split`: not run); `ask` then puts the held steps to the
    member."""

    text: str
    grounding: Grounding
    writes: frozenset[str]
    which: Which | None = None
    held: list[PlannedCall] = field(default_factory=list)
    needs_yes: bool = False  # a held step waits for a yes, not only for a pick

    def before(self, run: Run, plan: list[PlannedCall]) -> tuple[Reply, PendingClarification] | None:
        """The question for the analysis's plan, kept whole, when it needs the member's yes or pick first; None
        when it may run now."""
        if risky := unasked(plan, self.text, self.grounding, self.writes):
            return ask(run, plan, risky, self.text)
        if self.which is not None and self.which.pointing(plan):
            return self.which.ask(run, plan, self.text)
        return None

    def split(self, plan: list[PlannedCall]) -> list[PlannedCall]:
        """The steps of `plan` that may run now; the ones that wait for a yes or a pick (and those depending on
        them) are held."""
        risky = {step.id for step in unasked(plan, self.text, self.grounding, self.writes)}
        self.needs_yes = self.needs_yes or bool(risky)
        waiting = set(risky)
        if self.which is not None:
            waiting |= {step.id for step in self.which.pointing(plan)}
        grew = True
        while grew:
            before = len(waiting)
            waiting |= {step.id for step in plan if waiting & set(step.depends_on)}
            grew = len(waiting) > before
        held = [step for step in plan if step.id in waiting]
        # Ids unique among all held steps, which run as one plan on a yes.
        renamed = {step.id: f"h{len(self.held) + number}" for number, step in enumerate(held, 1)}
        for step in held:
            after = [renamed[d] for d in step.depends_on if d in renamed]
            self.held.append(step.model_copy(update={"id": renamed[step.id], "depends_on": after}))
        return [step for step in plan if step.id not in waiting]

    def held_for_model(self, plan: list[PlannedCall]) -> list[dict[str, Any]]:
        """What the model reads of held steps, in place of their results."""
        return [{"id": step.id, "tool": step.tool, "ok": False, "error": HELD} for step in plan]

    def ask(self, run: Run, before: str) -> tuple[Reply, PendingClarification]:
        """The reply `before` (what the model wrote), then the question for the held steps: which row, when that
        is all they wait for, else the yes (a yes to a step the member did not ask for picks no row)."""
        if self.which is not None and not self.needs_yes:
            reply, pending = self.which.ask(run, self.held, self.text)
        else:
            reply, pending = ask(run, self.held, self.held, self.text)
        text = f"{before.strip()}\n\n{reply.text}" if before.strip() else reply.text
        return Reply(text, reply.outcome, options=reply.options, media_ids=tuple(run.media_ids)), pending


def planned(call_id: str, tool: str, arguments: str | dict[str, Any]) -> PlannedCall | None:
    """A native tool call as a plan step; None when its arguments are no JSON object (the tool refuses it)."""
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
    except (ValueError, RecursionError):
        return None
    if not isinstance(args, dict):
        return None
    return PlannedCall(id=call_id[:20] or "v", tool=tool, args=args)


def _rows(step: PlannedCall) -> int:
    ids = step.args.get("memory_ids")
    return len(ids) if isinstance(ids, list) else 1


def ask(run: Run, plan: list[PlannedCall], risky: list[PlannedCall], text: str) -> tuple[Reply, PendingClarification]:
    """Ask for the member's yes to the plan, keeping it with the question."""
    language = language_of(text)
    what = "; ".join(_describe(step, language) for step in risky[:5])
    question = say("confirm", language, what=what)
    options = (say("yes", language), say("no", language))
    log.info("plan.consent.requested", steps=len(risky))
    run.note("plan.consent.requested", tools=[step.tool for step in risky])
    pending = PendingClarification(
        inbox_id=run.message.inbox_id,
        question=question,
        options=list(options),
        state={"text": text[:2000], "consent": [step.model_dump() for step in plan]},
    )
    return Reply(question, "clarifying", options=options), pending


async def resume(run: Run, pending: PendingClarification, text: str) -> Reply | None:
    """The answer to a consent question: yes (or, to "which one?", a row offered) runs the kept plan, against the
    row picked; no drops it; anything else is a new message (`None`) and the kept plan is dropped with it."""
    language = language_of(text)
    plan = [PlannedCall.model_validate(step) for step in pending.state.get("consent", [])]
    rows: dict[str, int] = pending.state.get("which") or {}
    picked = _picked(rows, text) if rows else None
    if picked is None and _NO.search(text):
        run.note("plan.consent.refused")
        return Reply(say("left_alone", language), "answered")
    if picked is not None:
        plan = [_pointed_at(step, picked) for step in plan]
    elif rows or not _YES.search(text):
        return None
    run.note("plan.consent.given", steps=len(plan))
    results: list[StepResult] = await run_plan(run, plan)
    degraded = any(not result.ok for result in results)
    asked = str(pending.state.get("text") or text)  # "Ja" alone says little
    text = basic_answer(results)
    if not degraded and {step.tool for step in plan} == {"forget_me"}:
        text = say("forgot_me", language_of(asked))
    audience = privacy.requested(asked, run.members, run.message.user_id)  # the kept plan was set to it
    if told := privacy.told(audience, run.members, asked, results):
        text = f"{text}\n{told}"
    return Reply(text, "degraded" if degraded else "answered", media_ids=tuple(run.media_ids))


def _picked(rows: dict[str, int], text: str) -> int | None:
    """The memory_id of the row the answer picks: its option as offered (a button's label), its number in the
    list, or the one option the answer quotes."""
    answer = text.strip()
    options = list(rows)
    if answer in rows:
        return rows[answer]
    if answer.isdigit() and 1 <= int(answer) <= len(options):
        return rows[options[int(answer) - 1]]
    quoted = [option for option in options if option in answer]
    return rows[quoted[0]] if len(quoted) == 1 else None


def _pointed_at(step: PlannedCall, memory_id: int) -> PlannedCall:
    """`step` against the row the member picked, when it changes or forgets one memory."""
    if step.tool not in _ONE_ROW or _rows(step) != 1:
        return step
    key, value = ("memory_ids", [memory_id]) if step.tool == "forget" else ("memory_id", memory_id)
    return step.model_copy(update={"args": {**step.args, key: value}})


def _describe(step: PlannedCall, language: str) -> str:
    if step.tool == "forget_me":
        return say("forget_me", language)
    if step.tool == "forget":
        count = _rows(step)
        return _FORGET.get(language, _FORGET["en"])[0 if count == 1 else 1]
    if step.tool in _CHANGES:
        return _CHANGES[step.tool].get(language, _CHANGES[step.tool]["en"])
    return step.tool.replace("_", " ")
