"""Writes the member did not ask for wait for their yes: a plan that changes things in answer to a question, changes
or forgets more than one row at once, or changes or forgets anything when the message asked for no such thing
(a stored text saying "forget everything" must not be able to make the model do it). The plan is kept with the
question and runs, unchanged and without the model, when the member says yes."""

from __future__ import annotations

import re
from typing import Any

import structlog

from engine.analysis import PlannedCall
from engine.capabilities import routing
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
_MAX_ROWS = 1  # forgetting more than one row at once ("everything") always waits for a yes
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
        if step.tool in ALWAYS_ASK or question or (destructive and not asked_to_change) or rows(step) > _MAX_ROWS:
            risky.append(step)
    return risky


def rows(step: PlannedCall) -> int:
    """How many rows a step changes or forgets."""
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
    """The answer to a consent question: yes runs the kept plan, no drops it; anything else is a new message
    (`None`) and the kept plan is dropped with it."""
    language = language_of(text)
    if _NO.search(text):
        run.note("plan.consent.refused")
        return Reply(say("left_alone", language), "answered")
    if not _YES.search(text):
        return None
    plan = [PlannedCall.model_validate(step) for step in pending.state.get("consent", [])]
    run.note("plan.consent.given", steps=len(plan))
    results: list[StepResult] = await run_plan(run, plan)
    degraded = any(not result.ok for result in results)
    text = basic_answer(results)
    if not degraded and {step.tool for step in plan} == {"forget_me"}:
        text = say("forgot_me", language_of(str(pending.state.get("text") or text)))  # "Ja" alone says little
    return Reply(text, "degraded" if degraded else "answered", media_ids=tuple(run.media_ids))


def _describe(step: PlannedCall, language: str) -> str:
    args: dict[str, Any] = step.args
    if step.tool == "forget_me":
        return say("forget_me", language)
    if step.tool == "forget":
        return f"forget {rows(step)} memories"
    if step.tool == "update_memory_fields":
        return f"change memory {args.get('memory_id')}"
    if step.tool == "cancel_reminder":
        return f"cancel reminder {args.get('reminder_id')}"
    return step.tool.replace("_", " ")
