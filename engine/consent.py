"""Some writes wait for the member's yes, whatever the household holds: forgetting the member (`forget_me`),
forgetting or cancelling reminders in bulk (more than one row, or "everything"), and emptying a shared list. The plan
is kept with the question and runs, unchanged and without the model, when the member says yes.
"""

from __future__ import annotations

import re

import structlog

from engine import privacy
from engine.analysis import PlannedCall
from engine.capabilities.phrases import say
from engine.capabilities.words import EVERYTHING
from engine.domain import Reply
from engine.executor import StepResult, run_plan
from engine.grounding.language import language_of
from engine.replies import basic_answer
from engine.run import Run
from tools.storage.interactions import PendingClarification

log = structlog.get_logger()

ALWAYS_ASK = frozenset({"forget_me"})
_BULK = frozenset({"forget", "cancel_reminder"})  # forgetting or cancelling more than one row at once always asks
# Without the count: a number in a reply must come from the member's words or the household's rows.
_BULK_SAID = {
    "forget": {
        "en": ("forget this memory", "forget several memories"),
        "de": ("diesen Eintrag vergessen", "mehrere Einträge vergessen"),
        "zh": ("删除这条记录", "删除多条记录"),
    },
    "cancel_reminder": {
        "en": ("cancel this reminder", "cancel several reminders"),
        "de": ("diese Erinnerung absagen", "mehrere Erinnerungen absagen"),
        "zh": ("取消这个提醒", "取消多个提醒"),
    },
}
_YES = re.compile(
    r"^\W*(?:yes|yeah|yep|ok|okay|sure|go ahead|do it|please do|confirm|ja|jawohl|klar|mach)\b"
    r"|^\W*(?:好的?|是的?|确认|可以|行|对)",
    re.IGNORECASE,
)
_NO = re.compile(r"^\W*(?:no|nope|don'?t|cancel|stop|nein|lass|不|不要|别|取消)", re.IGNORECASE)


def must_ask(plan: list[PlannedCall], text: str) -> list[PlannedCall]:
    """The steps of `plan` that wait for a yes whatever the message asked: forgetting the member, and forgetting
    more than one row or "everything" (`text`: the message), however few rows the household holds."""
    bulk = [step for step in plan if step.tool in _BULK]
    many = sum(_rows(step) for step in bulk) > 1 or (bulk and EVERYTHING.search(text))
    return [step for step in plan if step.tool in ALWAYS_ASK or _empties(step) or (step in bulk and many)]


def _empties(step: PlannedCall) -> bool:
    """The step takes every item off a list, open ones too ("lösch die ganze einkaufsliste")."""
    return step.tool == "clear_done_items" and step.args.get("everything") is True


def _rows(step: PlannedCall) -> int:
    ids = step.args.get("memory_ids")
    return len(ids) if isinstance(ids, list) else 1


def ask(run: Run, plan: list[PlannedCall], text: str) -> tuple[Reply, PendingClarification]:
    """Ask for the member's yes to the plan, keeping it with the question."""
    language = language_of(text)
    what = "; ".join(_described(plan, language))
    question = say("confirm", language, what=what)
    options = (say("yes", language), say("no", language))
    log.info("plan.consent.requested", steps=len(plan))
    run.note("plan.consent.requested", tools=[step.tool for step in plan])
    pending = PendingClarification(
        inbox_id=run.message.inbox_id,
        question=question,
        options=list(options),
        state={"text": text[:2000], "consent": [step.model_dump() for step in plan]},
    )
    return Reply(question, "clarifying", options=options), pending


async def resume(run: Run, pending: PendingClarification, text: str) -> Reply | None:
    """The answer to a consent question: yes runs the kept plan; no drops it; anything else is a new message
    (`None`) and the kept plan is dropped with it."""
    language = language_of(text)
    plan = [PlannedCall.model_validate(step) for step in pending.state.get("consent", [])]
    if _NO.search(text):
        run.note("plan.consent.refused")
        return Reply(say("left_alone", language), "answered")
    if not _YES.search(text):
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


def _described(plan: list[PlannedCall], language: str) -> list[str]:
    """What the plan does, once per tool: "forget several memories", "cancel this reminder"."""
    said: list[str] = []
    for tool in dict.fromkeys(step.tool for step in plan):
        if tool == "forget_me":
            said.append(say("forget_me", language))
        elif any(_empties(step) for step in plan if step.tool == tool):
            emptied = dict.fromkeys(str(step.args.get("list_name", "shopping")) for step in plan if _empties(step))
            said.append(say("empty_list", language, list=", ".join(emptied)))
        elif tool in _BULK_SAID:
            count = sum(_rows(step) for step in plan if step.tool == tool)
            said.append(_BULK_SAID[tool].get(language, _BULK_SAID[tool]["en"])[0 if count == 1 else 1])
        else:
            said.append(tool.replace("_", " "))
    return said
