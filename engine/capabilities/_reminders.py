"""What the reminder capabilities share: whom a reminder is for, and how one reads in a list."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from engine.capabilities._events import shift
from engine.capabilities.capability import Situation
from engine.capabilities.phrases import say, when_text
from engine.capabilities.topics import shares_topic
from engine.capabilities.words import CORRECTING, FILLER, TELLING, cues, has_substance
from engine.grounding import Grounding
from engine.grounding.spelling import normalised

# "alle"/"jeden" alone also mean "every" ("alle 2 Wochen", "jeden Freitag"): only the unambiguous forms count.
_HOUSEHOLD = re.compile(
    r"\b(?:everyone|everybody|all of us|the whole family|the family|us all)\b|大家|全家|所有人|\ballen\b"
    r"|\balle\b(?!\s+(?:\d|zwei|drei|vier|fünf|sechs|paar|\w+ (?:tage|wochen|monate)))|\bdie ganze familie\b"
    r"|\bjeden von uns\b",
    re.I,
)


def recipient(situation: Situation) -> str:
    """Who the reminder is for: the member named right after "remind" or another word of telling ("remind Ben",
    "nudge ben", "提醒Ben", "erinnere Ben", "sag Ben"), the household when the message says everyone, otherwise the
    member who wrote."""
    text = situation.text
    me = situation.run.message.user_id
    for member in situation.run.members:
        if member.id == me:
            continue
        name = re.escape(member.name)
        # Not \b after the name: "提醒Ben带伞" has no word boundary between "Ben" and "带".
        after = r"(?![A-Za-z0-9])"
        told = rf"(?<![A-Za-z])(?<!\bto )(?<!\bzu )(?:{TELLING})\s*@?{name}{after}"  # not "remind me to tell ben"
        asked = rf"{told}|{name}{after}\s*needs to be reminded"
        german_end = rf"\b{name}{after}(?:\s+\S+){{0,8}}\s+(?:daran\s+)?erinner(?:n|t)\b"  # "Ben an den Müll erinnern"
        if re.search(asked, text, re.I) or re.search(german_end, text, re.I):
            return member.name
    if _HOUSEHOLD.search(text):
        return "household"
    return "self"


def whom_text(situation: Situation) -> str:
    """Whom the reminder is for, as the reply names them: "you", "everyone" or the member's name."""
    whom = recipient(situation)
    if whom in ("self", "household"):
        return say("me" if whom == "self" else "household", situation.language)
    return whom


def reminder_text(row: dict[str, Any], language: str = "en") -> str:
    parts = [str(row.get("text", ""))]
    if row.get("next_at"):
        at = datetime.fromisoformat(str(row["next_at"])).replace(tzinfo=None)
        parts.append(when_text(at, language))
    if row.get("rrule"):
        parts.append(f"({row['rrule']})")
    recipients = row.get("recipients") or []
    if recipients:
        parts.append("→ " + ", ".join(recipients))
    return " ".join(parts)


async def active_reminders(situation: Situation) -> list[dict[str, Any]]:
    """The member's coming reminders, as `list_reminders` gives them."""
    run = situation.run
    registry = run.deps.registry
    args = registry.validate("list_reminders", {"limit": 20})
    async with run.transaction() as conn:
        listed = await registry.run(run.tool_context(conn), "list_reminders", args)
    return list(listed.get("reminders", []))


async def reminders_about(situation: Situation) -> list[dict[str, Any]]:
    """The coming reminders about what the message names ("schieb das mit oma anrufen nach hinten": Oma anrufen)."""
    return about(situation, await active_reminders(situation))


_SHORT = 25  # a message this short that names nothing ("改成四点吧", "make it 4 instead") goes on from the last one
# A span of time, said without its way ("ne halbe stunde", "half an hour", "半个小时"): `shift` reads the way.
_SPAN = cues(
    r"\b(?:an?|one|two|three|half an?|\d+|ne|eine?|halbe?|zwei|drei)\s+(?:halbe?\s+)?"
    r"(?:hours?|minutes?|mins?|stunden?|minuten)\b",
    r"[早晚]?[半一二两三\d]+个?(?:小时|钟头|分钟)",
)
_WAY = cues(r"\b(?:later|earlier|back|forward|später|früher|nach hinten|nach vorne?)\b")


_FEW = 6  # words a time is said in at most ("the day after tomorrow at 8am")


def only_retimed(text: str, grounding: Grounding) -> bool:
    """The message says a new time, or a span to move by, and nothing beside words of correcting: "no wait,
    tuesday", "mach lieber ne halbe stunde später", "不对，是八点" — said of what was just asked."""
    if not (grounding.moments or shift(text, grounding)):
        return False
    rest = normalised(text, grounding.language)  # the words the moments were read in: "halb vier" is "halb 4"
    for moment in grounding.moments:
        if len(moment.text.split()) <= _FEW:  # a day and a time read as one may hold the thing between them
            rest = rest.replace(moment.text, " ")
    rest = FILLER.sub(" ", CORRECTING.sub(" ", _WAY.sub(" ", _SPAN.sub(" ", rest))))
    return not has_substance(rest)


def about(situation: Situation, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reminders among `rows` about what the message names; for a message that names none of them and says
    little beside its times, the ones about what the member's last message named ("提醒我明天下午三点去取快递", then
    "改成四点吧"; "erinner mich morgen früh um 7 an die mülltonne", then "ne doch lieber erst um halb 8")."""
    named = [row for row in rows if shares_topic(situation.text, str(row.get("text") or ""))]
    turns = situation.history.turns
    said = situation.text
    for moment in situation.grounding.moments:
        said = said.replace(moment.text, " ")
    if named or not turns or (len(said.strip()) > _SHORT and not only_retimed(situation.text, situation.grounding)):
        return named
    return [row for row in rows if shares_topic(turns[-1].user_text, str(row.get("text") or ""))]
