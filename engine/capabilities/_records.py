"""What the recording capabilities share: category labels, the moment a told thing happens, the calendar event a told
plan makes, how an amount and a long text read in a reply, and a note's kind held against the message's evidence."""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated
from zoneinfo import ZoneInfo

from pydantic import StringConstraints

from engine.capabilities.capability import Situation
from engine.capabilities.words import (
    BODY,
    BODY_MEASURE,
    BOUND,
    COMING,
    CONTACT_DETAILS,
    DOSE,
    HOURS,
    LENT,
    OCCASION,
    STANDING,
    TOLD_DONE,
)
from engine.grounding import Grounding, Moment, Money
from engine.grounding.days import find_days

Label = Annotated[str, StringConstraints(strip_whitespace=True, to_lower=True, min_length=1, max_length=30)]


Short = Annotated[str, StringConstraints(strip_whitespace=True, max_length=60)]


# A plan the whole family has: "we", "the family", "wir", "我们", "全家".
_WE = re.compile(r"\b(?:we|we're|us|our|the family|everyone|wir|uns|unsere?)\b|我们|全家|大家", re.I)


def slug(value: str) -> str:
    return "-".join(value.replace("_", " ").split())[:30] or "other"


def checked_kind(kind: str, situation: Situation) -> str:
    """The model's kind, held against the message's own evidence: a dose of a medicine is a health note, a note is
    a contact only when it holds a number, an address or a link to reach someone by, a plan only when it speaks of a
    time still ahead, a repetition not told as how things now stand, or something coming ("mia's new teacher is
    called mrs patel", "we agreed on an hour of screen time today", "the bus comes at 7:42 now" and "the bin men come
    on thursdays now" are facts) and is not a place's hours ("the gp is closed on wednesday afternoons"), and a
    health note only when it speaks of the body (`BODY`: "ben doesn't like mushrooms" and "the boiler pressure
    should be 1.5" are facts)."""
    text, grounding = situation.text, situation.grounding
    if DOSE.search(text) or (kind in ("fact", "note") and BODY_MEASURE.search(text)):
        return "health"  # a dose of medicine, a body's weight or height
    if kind == "contact" and not CONTACT_DETAILS.search(text):
        return "fact"
    # a repetition told as how things now stand is a schedule: "the bin men come on thursdays now", "以后每周二…"
    schedule = bool(grounding.repeats) and STANDING.search(text) is not None
    habit = grounding.repeats and not schedule
    coming = (COMING.search(text) and not schedule) or OCCASION.search(text)
    if kind == "plan" and not (_ahead(situation) or habit or coming):
        return "fact"
    if kind == "plan" and LENT.search(text) and not any(m.has_time for m in _ahead(situation)):
        return "fact"  # a thing lent: where it is, whenever it comes back ("next week"); not a time to meet
    if kind == "plan" and HOURS.search(text):
        return "fact"  # a place's hours: when the family can go, no plan of theirs
    if kind == "health" and not BODY.search(text):
        return "fact"  # "mia mag keine tomaten mehr": a liking; "tyre pressure 2.4 bar": nothing of the body
    return kind


def _ahead(situation: Situation) -> list[Moment]:
    """The moments the message names that are still ahead on the member's clock (a day: from tomorrow on). A time of
    day without a day is none of them when the message tells how things stand now (`STANDING`: "the bus comes at
    7:42 now, not 7:35") or a rule's bound (`BOUND`: "parking is free after 6pm"), or tells of a moment gone by or
    of a thing done (`TOLD_DONE`: "ben had 38.5 last night, gave him calpol at 10": the time is that night's)."""
    now = situation.run.deps.clock.now().astimezone(ZoneInfo(situation.run.timezone)).replace(tzinfo=None)
    moments = situation.grounding.moments
    past = any(m.at < now if m.has_time else m.at.date() < now.date() for m in moments)
    dayless = past or any(cue.search(situation.text) for cue in (STANDING, BOUND, TOLD_DONE))
    # a time said after a coming day is that day's ("the zoo trip is thursday, be at school by 8")
    days = {m.at.date() for m in moments if m.at.date() > now.date() and _names_day(m.text, now.date())}
    return [
        m
        for m in moments
        if (m.at >= now if m.has_time else m.at.date() > now.date())
        and not (dayless and m.has_time and not _names_day(m.text, now.date()) and m.at.date() not in days)
    ]


def _names_day(text: str, today: date) -> bool:
    return bool(find_days(text, today) or _ZH_DAY.search(text))


_ZH_DAY = re.compile(r"[今明后昨前]天|[今明][晚早]|[周週]|星期|礼拜|\d{1,2}\s*[号日]|[一二三四五六七八九十]+[号日]")


_NOT_EVENTS = frozenset({"contact"})
# A moment that is only a part of today: a plan's time ("晚上去看电影"), but of a health note or a fact only when it
# happens ("孩子一直咳嗽 晚上更厉害", "mia's fever is up again tonight") — no calendar event.
_PART_OF_TODAY = re.compile(
    r"(?:早上|早晨|上午|中午|下午|傍晚|晚上|夜里|半夜|凌晨|今晚|今早|今天(?:早上|上午|下午|晚上))|"
    r"(?:tonight|this (?:morning|afternoon|evening)|heute (?:früh|morgen|mittag|nachmittag|abend|nacht))",
    re.IGNORECASE,
)


_TITLE_LENGTH = 120
_SENTENCES = re.compile(r"(?<=[.!?。！？])\s+|\n+")


def _title(text: str, said: list[str]) -> str:
    """An event's title: the message, or for a message too long to be one, the sentence naming when ("Fwd from the
    school office: … The swimming gala is on Thursday at 3pm." is "The swimming gala is on Thursday at 3pm.")."""
    if len(text) > _TITLE_LENGTH and said:
        for sentence in _SENTENCES.split(text):
            if said[0].lower() in sentence.lower():
                return clip(sentence.strip(), _TITLE_LENGTH)
    return clip(text, _TITLE_LENGTH)


def planned_event(situation: Situation, kind: str, person: str | None) -> dict[str, object] | None:
    """The calendar event a told plan makes: a coming moment (a time, or a day for an all-day event) or, for a
    plan, a repetition, for the member it names, the household ("we", "the family") or the writer; None for
    anything else."""
    if kind in _NOT_EVENTS or HOURS.search(situation.text):  # a place's hours are no event of the family's
        return None
    grounding = situation.grounding
    said = [r.text for r in grounding.repeats] or [m.text for m in _ahead(situation)]
    args: dict[str, object] = {"title": _title(situation.text, said), "whose": _whose(situation, person)}
    if grounding.repeats:  # a habit is a plan's ("mia has ballet on tuesdays"), never a fact's or the body's
        if kind != "plan":  # ("the gp is closed on wednesday afternoons", "inhaler every morning")
            return None
        repeat = grounding.repeats[0]  # "training immer dienstags" names no time: a day in the calendar, not 09:00
        start = repeat.first.isoformat(timespec="minutes") if repeat.has_time else repeat.first.date().isoformat()
        return {**args, "start": start, "rrule": repeat.rrule}
    coming = [
        m
        for m in _ahead(situation)
        if (kind == "plan" or not _PART_OF_TODAY.fullmatch(m.text.strip())) and not _whole_span(m, grounding)
    ]
    if not coming:
        return None
    moment = coming[0]
    if not moment.has_time:  # "grans 80th is on the 19th, party starts at 3": the time said later for that day
        moment = next((m for m in coming if m.has_time and m.at.date() == moment.at.date()), moment)
    start = moment.at.isoformat(timespec="minutes") if moment.has_time else moment.at.date().isoformat()
    return {**args, "start": start}


def _whole_span(moment: Moment, grounding: Grounding) -> bool:
    """A moment that is a week or longer without a day or time ("he'll bring it back next week", "下周奶奶来"): no
    day of it is the event's, so none is put in the calendar; a weekend or a named day still is."""
    span = grounding.span
    return not moment.has_time and span is not None and span.text == moment.text and (span.last - span.first).days >= 6


def _whose(situation: Situation, person: str | None) -> str:
    """The member the plan is about: the one the model names, else the one member the message names ("anna has her
    yoga class wednesday 7pm"), the household for "we" before that, else the writer."""
    named = [m.name for m in situation.run.members if person and m.name.lower() == person.lower()]
    if named:
        return named[0]
    if _WE.search(situation.text):
        return "household"
    if person is None and len(situation.grounding.people) == 1:
        return situation.grounding.people[0]
    return "self"


def occurred(situation: Situation) -> str | None:
    """When the stored thing happens: the first moment the message names, on the member's clock; None for now."""
    moments = situation.grounding.moments
    if not moments:
        return None
    moment = moments[0]
    return moment.at.isoformat(timespec="minutes") if moment.has_time else moment.at.date().isoformat()


def money_text(money: Money, situation: Situation) -> str:
    currency = money.currency or (situation.choices.get("currency") or [""])[0]
    return f"{money.amount} {currency}".strip()


def clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
