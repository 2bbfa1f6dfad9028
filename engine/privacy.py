"""Who sees what a member writes, decided from the member's own words rather than by the model.

A message that asks for privacy ("only for me", "keep it private", "nur für mich", "geheim", "私密", "别告诉任何人")
makes every row it creates private to its author; one that keeps something from a named member ("don't tell Sam",
"a surprise for Sam", "Überraschung für Sam", "给Sam的惊喜") hides those rows from that member. Without such words the
rows are the household's, whatever the model set: a model that misreads a message (or obeys a stored text) cannot
hide a row from someone, nor show one that was asked to be kept. Asking for privacy outranks a surprise: a private
row is already hidden from everyone.

`requested` reads the words, `apply` writes the result into the calls that create rows (memories, events,
reminders, lists, list items) and into a change of a memory when the words ask for an audience (else the change keeps
the row's: the model cannot publish a private note while correcting it), and `told` is the sentence the reply carries
when such a row was made.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from engine.analysis import PlannedCall
from engine.executor import StepResult
from engine.grounding.language import language_of
from tools.storage.households import Member
from tools.storage.visibility import EVERYONE, Audience

# The model tools that create rows of the tables members share; each takes `visibility` and `hidden_from`
# (tools/audience.py).
CREATES = frozenset({"store", "schedule_reminder", "add_event", "add_list_items"})
# The model tools that change an existing row and could change who sees it. The message's words decide here too:
# without them the row keeps its audience (the web app's toggle changes it), so a correction of a private note
# cannot publish it.
CHANGES = frozenset({"update_memory_fields"})

_I = re.IGNORECASE
_NOBODY = r"(?:anyone|anybody|everyone|everybody|the others|others|the family|a soul)"
_PRIVATE = re.compile(
    "|".join(
        (
            r"\b(?:only|just) for me\b",
            r"\bfor my eyes only\b",
            r"\b(?:just |only )?between (?:us|you and me|me and you)\b",
            r"\b(?:not|nothing) for (?:the others|anyone else|the family)\b",
            r"\bunter uns\b",
            r"\bkeep (?:it|this|that|them) (?:private|secret|to myself|between us)\b",
            r"\b(?:make|mark) (?:it|this|that|them) (?:as )?private\b",
            r"\b(?:it'?s|this is|that is|is) private\b",
            r"(?:^|[.!?;:,\n]\s*)private\s*[,:!.\-—]",  # "Private, only for me: …" — not "private school fees"
            r"\bprivately\b",
            r"\b(?:top )?secret\s*[,:!.\-—]",
            rf"\b(?:don'?t|do not|never) (?:tell|show) {_NOBODY}\b",
            r"\bnur für mich\b",
            r"\bnur ich\b",
            r"\bbehalte? (?:es|das|sie) für mich\b",
            r"\bgeheim\b",
            r"\bprivat\b",
            r"\bvertraulich\b",
            r"\b(?:sag|verrat|erzähl)\w* (?:es |das )?niemandem\b",
            r"私密",
            r"只有我",
            r"只给我",
            r"仅我",
            r"保密",
            r"(?:别|不要|不许)(?:告诉|跟)(?:任何人|别人|大家|其他人)",
        )
    ),
    _I,
)
# Each takes the member's name (a regular expression, escaped) in place of {name}.
_KEPT_FROM = (
    r"\b(?:don'?t|do not|never) (?:tell|show|let) {name}\b",
    r"\bsurprise\b[^.!?\n]{{0,40}}?\bfor {name}\b",
    r"\b{name}(?:'s| must not| shouldn'?t| should not) (?:surprise|know|find out|see)\b",
    r"\b(?:sag|verrat|erzähl|zeig)\w* (?:es |das )?{name} nichts?\b",
    r"\b{name} (?:nichts )?(?:sagen|verraten|erzählen)\b",
    r"\b{name} darf (?:das |es )?nicht (?:wissen|sehen|erfahren)\b",
    r"überraschung\w*\b[^.!?\n]{{0,40}}?\bfür {name}\b",
    r"(?:别|不要|不许)(?:告诉|跟|让){name}",
    r"给{name}[^。！？\n]{{0,20}}惊喜",
    r"{name}的惊喜",
)

_TOLD = {
    "private": {
        "en": "Kept private — only you see this.",
        "de": "Privat gehalten — nur du siehst das.",
        "zh": "已设为私密——只有您能看到。",
    },
    "hidden": {
        "en": "{name} won't see this.",
        "de": "{name} sieht das nicht.",
        "zh": "{name}看不到这条内容。",
    },
}


def requested(text: str, members: Sequence[Member], author_id: int) -> Audience:
    """Who the message asks its new rows to be shown to: the author alone, the household but one member, or (no
    such words) the household."""
    if _PRIVATE.search(text):
        return Audience("private")
    for member in members:
        if member.id == author_id or not member.name.strip():
            continue
        name = _name_pattern(member.name)
        if any(re.search(pattern.format(name=name), text, _I) for pattern in _KEPT_FROM):
            return Audience("household", member.id)
    return EVERYONE


def _name_pattern(name: str) -> str:
    """The name, not the start of a longer Latin word ("Sam", not "Samstag"); Chinese text runs on after it."""
    return rf"{re.escape(name.strip())}(?![a-zà-öø-ÿ])"


def apply(plan: Sequence[PlannedCall], audience: Audience, members: Sequence[Member]) -> list[PlannedCall]:
    """`plan` with each call that creates a row set to `audience`, whatever the model gave; other calls unchanged."""
    return [step.model_copy(update={"args": arguments(step.tool, step.args, audience, members)}) for step in plan]


# A row kept from a member is never that member's: "a surprise party for Sam" is the household's event (a reminder
# about it the author's own) that Sam does not see, whoever the model said it is for.
_NOT_FOR_THE_KEPT = {"add_event": ("whose", "household"), "schedule_reminder": ("recipient", "self")}


def arguments(tool: str, args: dict[str, Any], audience: Audience, members: Sequence[Member]) -> dict[str, Any]:
    """One call's arguments set to `audience` when `tool` creates a row, or changes one and the words ask for an
    audience; a change the words ask no audience for keeps the row's."""
    if tool not in CREATES | CHANGES:
        return args
    changed = {key: value for key, value in args.items() if key not in ("visibility", "hidden_from")}
    if tool in CHANGES and audience == EVERYONE:
        return changed
    changed["visibility"] = audience.visibility
    if audience.hidden_from is not None:
        kept_from = next((m.name for m in members if m.id == audience.hidden_from), None)
        changed["hidden_from"] = kept_from
        field, instead = _NOT_FOR_THE_KEPT.get(tool, (None, None))
        if kept_from is not None and field is not None and _same_name(changed.get(field), kept_from):
            changed[field] = instead
    return changed


def _same_name(value: Any, name: str) -> bool:
    return isinstance(value, str) and value.strip().casefold() == name.strip().casefold()


def told(audience: Audience, members: Sequence[Member], text: str, results: Sequence[StepResult]) -> str | None:
    """The sentence telling the member who sees what `results` created, in the language of `text` (the message);
    None when nothing was created or it is the household's."""
    if not any(r.ok and r.tool in CREATES for r in results):
        return None
    language = language_of(text)
    if audience.private:
        return _TOLD["private"][language]
    if audience.hidden_from is None:
        return None
    name = next((m.name for m in members if m.id == audience.hidden_from), None)
    return None if name is None else _TOLD["hidden"][language].format(name=name)
