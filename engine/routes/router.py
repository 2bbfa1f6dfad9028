"""Which route a message takes: keywords and the grounding first, the model only when they disagree.

Each rule names a family of cues in English, German and Chinese. The first rule that fires decides, in an order
chosen so that the more specific intent wins ("forget the dentist reminder" is a reminder change, "remind me how
much" is a reminder). When the cues contradict each other — a question that also asks to write — or when none of
them fits, the decision is the model's (`None` here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.grounding import Grounding
from engine.routes.cues import (
    CANCEL,
    DONE,
    DONE_WORDS,
    DONT_FORGET,
    FILLER,
    FORGET,
    GREETING,
    LIST,
    PAYING,
    QUESTION,
    REMIND,
    SMALL_TALK,
    SNOOZE,
    SPEND,
    SUM,
    UNDO,
    UNWANTED,
    UPDATE,
    VAGUE,
)
from engine.routes.organising_cues import AGENDA, BEFORE, BUDGET, FORGET_ME, MOVED, SHARED_LIST

_I = re.IGNORECASE


@dataclass(frozen=True)
class Routing:
    route: str | None  # None: the cues disagree or none fits; the model decides
    cue: str  # which rule decided, for the trace


def route_by_cues(text: str, grounding: Grounding, *, reminder_just_sent: bool) -> Routing:
    """The route the message's own words point to, or `None` when they leave it open."""
    question = bool(QUESTION.search(text))
    if GREETING.match(text):
        return Routing("chat", "greeting")
    if SMALL_TALK.search(text):
        return Routing("chat", "small talk")
    if UNDO.search(text):
        return Routing("undo", "undo")
    if FORGET_ME.search(text):
        return Routing("forget_me", "forget me")
    if LIST.search(text):
        return Routing("list", "list")
    keep_in_mind = bool(DONT_FORGET.search(text))
    reminder_words = bool(REMIND.search(text)) or keep_in_mind
    forget = bool(FORGET.search(text)) and not keep_in_mind
    if CANCEL.search(text) and not reminder_words:
        return Routing("event_cancel", "cancel")  # a reminder's change when the message names no event
    if CANCEL.search(text) or (reminder_words and not keep_in_mind and (forget or UNWANTED.search(text))):
        return Routing("reminder_change", "cancel")
    if reminder_just_sent and answers_a_reminder(text):
        return Routing("reminder_change", "snooze/done")
    if SNOOZE.search(text) and reminder_words and not grounding.repeats:
        return Routing("reminder_change", "snooze")
    if AGENDA.search(text) and not reminder_words:
        return Routing("calendar", "agenda")
    if forget:
        return Routing(None if question else "forget", "forget")
    if reminder_words and grounding.minutes and BEFORE.search(text):
        return Routing("event_reminder", "before an event")
    if reminder_words:
        return Routing("reminder", "remind")
    if MOVED.search(text) and not question and grounding.moments:
        return Routing("event_change", "moved")
    if BUDGET.search(text):
        return Routing("budget", "budget")
    if SHARED_LIST.search(text) and not grounding.money:
        return Routing("shared_list", "shared list")
    if UPDATE.search(text) and not question:
        return Routing("update", "correction")
    if question:
        if is_vague(text):
            return Routing("unclear", "vague question")
        return Routing("sum" if SUM.search(text) and not _asks_about_a_note(text) else "lookup", "question")
    if grounding.money or SPEND.search(text):
        return Routing("expense", "money")
    if is_vague(text):
        return Routing("unclear", "vague")
    return Routing("fact", "statement")


def is_vague(text: str) -> bool:
    """The message says nothing of its own: a reference without content ("the thing", "that") or only words of
    asking and noting ("write it down", "帮我记一下")."""
    short = len(text.split()) <= 5 and len(text.strip()) <= 30
    if not (VAGUE.search(text) or short):
        return False
    rest = FILLER.sub(" ", VAGUE.sub(" ", text))
    return not re.search(r"[^\W\d_]{3,}|[\u4e00-\u9fff]|\d", rest)


def says_what(text: str, amounts: list[str]) -> bool:
    """Whether a message about money says what it was for: a word of substance is left once the amounts, the
    words of paying and the filler are gone ("paid 50" says nothing; "paid 50 for pizza" does)."""
    rest = text
    for amount in amounts:
        rest = rest.replace(amount, " ")
    rest = FILLER.sub(" ", VAGUE.sub(" ", PAYING.sub(" ", rest)))
    return re.search(r"[^\W\d_]{3,}|[\u4e00-\u9fff]", rest) is not None


def answers_a_reminder(text: str) -> bool:
    """A snooze, or a short "done", said of the reminder just sent."""
    return bool(DONE.search(text) or SNOOZE.search(text) or _short_done(text))


def _short_done(text: str) -> bool:
    """ "got it, done", "打完了": a short message with a word of having done it."""
    return len(text.split()) <= 6 and len(text) <= 40 and DONE_WORDS.search(text) is not None


def _asks_about_a_note(text: str) -> bool:
    """'How many ibuprofen may Tom take?' asks about a stored fact, not about spending."""
    how_many = re.search(r"\bhow (?:many|much)\b(?! (?:times|money|did|do|have|has|was|were|is|are|we|i)\b)", text, _I)
    return bool(how_many) and not re.search(
        r"\bspen[dt]|\bcost|\bpa(?:id|y)|\bbuy|\bbought|\bearn|\bexpens|\bpurchas", text, _I
    )
