"""Steps 3–5 by capability: ground the message, pick its capability (`engine.capabilities.routing`), ask when a
required slot is missing, let the model fill the capability's small schema, run the tool calls the engine builds
from that answer (a tool's complaint goes back to the model once), and reply from the tools' results.

One model call does a simple record; every number in a reply comes from the message, the grounding or a tool.
"""

from __future__ import annotations

import json
import re
import time
from datetime import timedelta
from typing import Any

import structlog
from pydantic import BaseModel

from engine import consent, metrics, privacy, reply_field
from engine.analysis import PlannedCall, read_answer
from engine.capabilities import CAPABILITIES, UNCLEAR, Ask, Capability, Reroute, Said, Situation, routing
from engine.capabilities._reminders import only_retimed
from engine.capabilities.capability import constrained_schema
from engine.capabilities.phrases import say
from engine.capabilities.reminder import REMIND
from engine.capabilities.shared_list import one_more, told_bought
from engine.capabilities.words import FILLER, TELLING, THEN, VAGUE, says_what
from engine.context import History
from engine.domain import Reply
from engine.errors import AnalysisError
from engine.executor import StepResult, run_plan
from engine.grounding import Grounding, ground
from engine.grounding.categories import synonym_spans
from engine.grounding.language import CJK, name_pattern
from engine.grounding.spelling import commands_spelt
from engine.llm_types import LLMResponse, Message
from engine.numbers import invented
from engine.prompts import PromptVersion
from engine.replies import basic_answer
from engine.run import Run
from tools.storage import memories as stored
from tools.storage.interactions import PendingClarification

log = structlog.get_logger()

_MAX_REROUTES = 3
# A new message answers the pending question unless it clearly starts something else.
_RESUMABLE = frozenset({"expense", "fact", "unclear", None})


async def answer(
    run: Run, version: PromptVersion, text: str, history: History
) -> tuple[Reply, PendingClarification | None]:
    text = routing.without_smuggled(commands_spelt(text))  # "pls cancle the grandma reminder" asks to cancel it
    parts = two_requests(text, run) if history.pending is None else None
    if parts is not None:
        return await _both(run, version, parts, history)
    return await _one(run, version, text, history)


# Where a message may hold two requests: "…, and remind me …", "… und erinnere mich …", "…，然后…".
_SEAMS = re.compile(
    r"(?:\s*[,;]\s*|\s+)(?:and (?:then |also )?|also |plus |und (?:dann |außerdem )?|außerdem |sowie )(?=\S)"
    r"|\s*[,;，；](?!\d)\s*(?:然后|还有|另外|再)?",  # not the comma of "23,40"
    re.IGNORECASE,
)


def two_requests(text: str, run: Run) -> tuple[str, str] | None:
    """The message's two requests, when its words on either side of a seam are each claimed by a different
    capability that does something ("paid £45 for the school trip, and remind me friday at 8 to send the form"); a
    side about money names an amount ("delete the parking ticket, the company paid for that" is one request)."""
    members = [member.name for member in run.members]
    now = run.deps.clock.now()
    # a seam after a comma first: "spent 23.40 on plasters and calpol, and add nappies to the list" parts at ", and"
    seams = sorted(_SEAMS.finditer(text), key=lambda seam: re.search(r"[,;，；]", seam.group()) is None)
    for seam in seams:
        first, second = text[: seam.start()].strip(), text[seam.end() :].strip()
        if min(_size(first), _size(second)) < 8 or _refers_back(second):
            continue
        groundings = [ground(part, now, run.timezone, members) for part in (first, second)]
        names = [
            routing.decisive(routing.reading(part, g)) for part, g in zip((first, second), groundings, strict=True)
        ]
        whole = all(name != "expense" or g.money for name, g in zip(names, groundings, strict=True))
        if sorted(map(str, names)) == ["expense", "shared_list"]:  # "pizza geholt, mit trinkgeld 27 euro": one buy
            whole = whole and not told_bought((first, second)[names.index("shared_list")])
        if whole and all(name not in _NO_REQUEST for name in names) and names[0] != names[1]:
            return first, second
    return None


# Claims that make no request of their own beside another: a greeting, a vague word, a note's "add"/"remember".
_NO_REQUEST = frozenset({None, "chat", "fact", UNCLEAR})


# What FAA keeps, named without its thing ("änder mal die erinnerung", "can you move the reminder"): a part made of
# these refers to the thing the other part names.
_RECORD_NOUNS = re.compile(
    r"\b(?:reminders?|erinnerung(?:en)?|notes?|notiz(?:en)?|entry|eintrag|mal|doch)\b|提醒|记录",
    re.IGNORECASE,
)


def _refers_back(part: str) -> bool:
    """A request without a thing of its own ("der torcode stimmt nicht mehr, kannst du rausnehmen", "…, and delete
    it", "…，删掉吧", "…, änder mal die erinnerung"): at most two words of substance and no number, so it acts on
    what the first part names."""
    rest = FILLER.sub(" ", VAGUE.sub(" ", _RECORD_NOUNS.sub(" ", part)))
    if re.search(r"\d", rest):
        return False
    return len(re.findall(r"[^\W\d_]{3,}", rest)) + len(CJK.findall(rest)) / 2 <= 2


def _size(text: str) -> int:
    """A part's length, a Chinese character counting as two letters."""
    return len(text) + sum(1 for char in text if "\u4e00" <= char <= "\u9fff")


async def _both(
    run: Run, version: PromptVersion, parts: tuple[str, str], history: History
) -> tuple[Reply, PendingClarification | None]:
    """Each request answered in turn; a question back about one of them comes last, and the answer to it resumes
    that request alone."""
    done: list[Reply] = []
    asking: tuple[Reply, PendingClarification] | None = None
    for part in parts:
        reply, pending = await _one(run, version, part, history)
        if pending is not None and asking is None:
            asking = reply, pending
        elif pending is None:
            done.append(reply)
    text = "\n".join(reply.text for reply in done if reply.text)
    if asking is not None:
        question, pending = asking
        text = f"{text}\n{question.text}".strip()
        return Reply(text, question.outcome, options=question.options, media_ids=tuple(run.media_ids)), pending
    degraded = any(reply.outcome == "degraded" for reply in done)
    return Reply(text, "degraded" if degraded else "answered", media_ids=tuple(run.media_ids)), None


async def _one(
    run: Run, version: PromptVersion, text: str, history: History
) -> tuple[Reply, PendingClarification | None]:
    started = time.monotonic()
    text = routing.without_override(text)
    grounding = await ground_message(run, text)
    combined, pending_route = _resume(text, history, grounding)
    kept = None
    if combined == text and pending_route is None:  # no answer to a question FAA asked: it may follow the last turn
        combined, kept = await _following(run, text, history, grounding)
    if combined != text:
        text, grounding = combined, await ground_message(run, combined)
    if pending_route:
        name, chosen_by = pending_route, "resumed"
    elif kept:
        name, chosen_by = kept, "follow-up"
    else:
        reading = routing.reading(text, grounding, reminder_just_sent=bool(history.fired))
        name, chosen_by = await routing.choose(run, version, reading)
    route = CAPABILITIES[name]
    run.route = name
    run.note("route", route=name, chosen_by=chosen_by)
    metrics.route_taken(name, chosen_by)
    situation = Situation(run, text, grounding, history)
    prepared = await route.prepare(situation)
    for _ in range(_MAX_REROUTES):  # a moved event that is no event may be a correction, which may be news
        if not isinstance(prepared, Reroute):
            break
        run.note("route", route=prepared.capability, chosen_by="reroute")
        name, route = prepared.capability, CAPABILITIES[prepared.capability]
        run.route = name
        situation = Situation(run, text, grounding, history)
        prepared = await route.prepare(situation)
    if isinstance(prepared, Reroute):
        return _ask(run, UNCLEAR, text, Ask(say("ask_what", situation.language)))
    if isinstance(prepared, Ask):
        return _ask(run, name, text, prepared)
    if isinstance(prepared, Said):
        return Reply(prepared.text, "answered"), None
    model = route.answer_model(situation)
    answer_ = await _fill(run, version, route, situation, model) if model is not None else None
    log.info("step3.analysis.completed", duration_ms=_step("analyse", started), route=name, rounds=run.rounds)
    started = time.monotonic()
    audience = privacy.requested(text, run.members, run.message.user_id)
    plan = route.plan(situation, answer_)
    if isinstance(plan, Ask):
        return _ask(run, name, text, plan)
    plan = privacy.apply(plan, audience, run.members)  # who sees a new row is the words' to say, not the model's
    if route.consent == "always" or situation.guessed or consent.must_ask(plan, text):
        return consent.ask(run, plan, text)
    results = await run_plan(run, plan) if plan else []
    if model is not None and any(not r.ok and r.fixable for r in results):
        answer_, results = await _repair(run, version, route, situation, model, answer_, plan, results)
    reply = _reply(run, route, situation, answer_, results)
    if told := privacy.told(audience, run.members, text, results):
        reply = f"{reply}\n{told}"
    log.info(
        "step5.execution.completed",
        duration_ms=_step("execute", started),
        tool_calls=len(results),
        failed=sum(not r.ok for r in results),
    )
    degraded = any(not r.ok for r in results)
    return Reply(reply, "degraded" if degraded else "answered", media_ids=tuple(run.media_ids)), None


async def _following(run: Run, text: str, history: History, grounding: Grounding) -> tuple[str, str | None]:
    """The text to work on and the route it keeps when the message follows the last turn: one more thing goes on
    the list things were just put on ("brot auch noch"), a question that goes on from the last one goes where that
    one went ("and the month before?"), a new time alone moves the reminder just asked for ("no wait, tuesday"), a
    reminder asked for "then" reads the last message's time."""
    if _one_more_thing(text, history, grounding):
        return text, "shared_list"
    if _GOES_ON.search(text) or _SAME.search(text):
        if (asked := follow_up(text, history, grounding, run, await _people(run))) is not None:
            return asked, _answered_by(history.turns[-1].route)
        return text, None
    if (retimed := _retimes_last(text, history, grounding, run)) is not None:
        return retimed, "reminder_change"
    return _when_said_before(text, history, grounding, run) or text, None


async def ground_message(run: Run, text: str) -> Grounding:
    """The grounding of `text`, journaled: a retried job resolves "in 2 hours" from the first attempt's clock."""
    members = [m.name for m in run.members]
    now = run.deps.clock.now()
    data = await run.once("grounding", lambda: _grounded(text, now, run.timezone, members))
    return Grounding.from_json(data)


async def _grounded(text: str, now: Any, timezone: str, members: list[str]) -> dict[str, Any]:
    return ground(text, now, timezone, members).to_json()


def _resume(text: str, history: History, grounding: Grounding) -> tuple[str, str | None]:
    """The text to work on and the route to resume when the message answers the question FAA asked last."""
    pending = history.pending
    if pending is None or "route" not in pending.state:
        return text, None
    own = routing.decisive(routing.reading(text, grounding))
    if own not in _RESUMABLE and own != pending.state["route"]:
        return text, None
    original = str(pending.state.get("text", ""))
    combined = f"{original}\n{text}".strip()
    route = str(pending.state["route"])
    return combined, None if route == UNCLEAR else route


# The last request again, for someone else: "same for ben pls", "ben bitte auch", "Ben也一样", "给Ben也设一个一样的",
# "也提醒一下Ben".
_SAME = re.compile(
    rf"\bsame for\b|\b(?:too|as well)\W*$|\bauch\b|\bebenfalls\b|也一样|也要|也是|(?:一样|同样)的|也(?:{TELLING})",
    re.IGNORECASE,
)
# Words that ask for the same again without saying anything of its own: "do one for ben too", "mach ben auch eins",
# "给Ben也设一个一样的".
_SET_UP = re.compile(r"\b(?:do|set|make|add|one)\b|\b(?:mach\w*|eins|einen)\b|给|也|设|弄|加|来|一个", re.IGNORECASE)
# Whom a reminder is asked for, when it is the writer: "remind me", "erinner mich", "提醒我", "七点叫我".
_FOR_ME = re.compile(rf"(?<![A-Za-z])({TELLING})\s*(?:me|mich|我)(?![A-Za-z])", re.IGNORECASE)
# A short message that goes on from the last question: "and last month?", "und im September?", "那上个月呢？".
_GOES_ON = re.compile(
    r"^\W*(?:and|what about|how about|same for|und|was ist mit|wie ist es mit|wie sieht'?s aus mit|那|还有)\b"
    r"|^\W*(?:und|and)\W|呢\W*$",
    re.IGNORECASE,
)
_BEFORE = re.compile(
    r"\b(?:month|one) before\b|\bprevious month\b|\bmonat davor\b|\bvormonat\b|前一个月|再上个月", re.IGNORECASE
)
_MONTHS = {
    "en": "in {name}",
    "de": "im {name}",
    "zh": "{month}月",
}
_MONTH_NAMES = {
    "en": "January February March April May June July August September October November December".split(),
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember".split(),
}


async def _people(run: Run) -> list[str]:
    """The people a follow-up may name: the members and the people the household's memories are about."""
    async with run.transaction() as conn:
        told = await stored.names(conn, run.message.household_id, "person")
    return [member.name for member in run.members] + told


def follow_up(text: str, history: History, grounding: Grounding, run: Run, people: list[str]) -> str | None:
    """The last question asked again for the period the follow-up names ("and last month?"), for the month before
    the one it asked about ("and the month before?"), for the other thing it names ("and on fuel?" after "how much
    did we spend on groceries this month") or of the other person (`people`: "und ben?" after "welche schuhgröße hat
    mia"); after a reminder the writer asked for themselves, that reminder for the member named ("same for ben pls"),
    and after one asked for another member, that reminder for the writer ("mich auch bitte"); None when the message
    is no such follow-up."""
    if not history.turns or len(text) > 60:
        return None
    last = history.turns[-1]  # the member's last message: a follow-up goes on from it
    now = run.deps.clock.now()
    asked = ground(last.user_text, now, run.timezone, [member.name for member in run.members])
    if not routing.reading(last.user_text, asked).question:
        members = [member.name for member in run.members]
        return _for_another(last.user_text, text, members) or _for_me(last.user_text, text, members)
    if not _GOES_ON.search(text):
        return None
    if grounding.span is None and grounding.category and asked.category and grounding.category != asked.category:
        return _other_thing(last.user_text, text)
    if grounding.span is None and (other := _other_person(last.user_text, text, people)) is not None:
        return other
    if asked.span is None:
        return None
    if grounding.span is not None:
        period = grounding.span.text
    elif _BEFORE.search(text) and asked.span.first.day == 1:
        month = (asked.span.first.replace(day=1) - timedelta(days=1)).month
        language = asked.language
        names = _MONTH_NAMES.get(language, _MONTH_NAMES["en"])
        period = _MONTHS.get(language, _MONTHS["en"]).format(name=names[month - 1], month=month)
    else:
        return None
    return re.sub(re.escape(asked.span.text), period, last.user_text, count=1, flags=re.IGNORECASE)


def _when_said_before(text: str, history: History, grounding: Grounding, run: Run) -> str | None:
    """A reminder asked for "then", at the time the member's last message named: that message and this one, read
    together ("明天上午十点要去交水费", then "到时候提醒我一下"); None otherwise."""
    if grounding.moments or not history.turns or not (REMIND.search(text) and THEN.search(text)):
        return None
    last = history.turns[-1].user_text
    said = ground(last, run.deps.clock.now(), run.timezone, [member.name for member in run.members])
    return f"{last}\n{text}" if said.moments else None


def _one_more_thing(text: str, history: History, grounding: Grounding) -> bool:
    """One more thing named right after the member put things on a list (`shared_list.one_more`), when the message
    asks nothing and no other capability claims it outright."""
    if not history.turns or history.turns[-1].route != "shared_list":
        return False
    if not one_more(text, history.turns[-1].user_text, grounding):
        return False
    reading = routing.reading(text, grounding)
    return not reading.question and routing.decisive(reading) in (None, "shared_list")


# An hour said alone, with no clock ("actually make that 6", "lieber 7"): right after a reminder, its new time.
_HOUR_ALONE = re.compile(r"(?<![\d.,:])\b([01]?\d|2[0-3])\b(?![.,:]?\d)")


def _retimes_last(text: str, history: History, grounding: Grounding, run: Run) -> str | None:
    """The text to work on when it says a new time and nothing else, right after the member asked for a reminder:
    that reminder at the new time ("remind me friday at 9 to call the bank", then "no wait, tuesday"). An hour said
    alone ("actually make that 6") is that hour: the reminder's half of the day keeps it (`_events.retimed`)."""
    if not history.turns or history.turns[-1].route != "reminder":
        return None
    if only_retimed(text, grounding):
        return text
    if grounding.moments or grounding.money or len(_HOUR_ALONE.findall(text)) != 1:
        return None
    timed = _HOUR_ALONE.sub(r"\1:00", text)
    said = ground(timed, run.deps.clock.now(), run.timezone, [member.name for member in run.members])
    return timed if only_retimed(timed, said) else None


def _answered_by(route: str | None) -> str | None:
    """The capability that answered the question a follow-up asks again, when it is one that only answers questions
    (the sum, the lookup, the calendar): "und im oktober?" after a sum of fuel is that sum again, not a new choice."""
    return route if route in CAPABILITIES and CAPABILITIES[route].asks else None


def _other_person(asked: str, text: str, people: list[str]) -> str | None:
    """The question `asked` of the one person `text` names instead of the one it named."""
    said = {name for name in people if name_pattern(name).search(text)}
    before = {name for name in people if name_pattern(name).search(asked)}
    if len(said) != 1 or len(before) != 1 or said == before:
        return None
    [name], [old] = said, before
    return name_pattern(old).sub(name, asked, count=1)


def _for_another(asked: str, text: str, members: list[str]) -> str | None:
    """The reminder the member asked for themselves, asked again for the one member `text` names ("remind me
    tomorrow at 7am to take my vitamins", then "same for ben pls": "remind Ben tomorrow at 7am …")."""
    named = [name for name in members if name_pattern(name).search(text)]
    if len(named) != 1 or not _SAME.search(text) or not _FOR_ME.search(asked):
        return None
    [name] = named
    if says_what(_SET_UP.sub(" ", _SAME.sub(" ", name_pattern(name).sub(" ", text))), []):
        return None  # it says more than whom: "Ben hat auch Fieber" is news of its own
    return _FOR_ME.sub(lambda told: _telling(told.group(1), name), asked, count=1)


# The writer asking for themselves too: "me too", "mich auch", "我也要".
_ME_TOO = re.compile(
    r"\b(?:me too|me as well|and me|mich auch|auch mich|mir auch)\b|我也(?:要|是|一样)?", re.IGNORECASE
)


def _for_me(asked: str, text: str, members: list[str]) -> str | None:
    """The reminder the member asked for one other member, asked again for themselves ("erinner ben morgen um 7 an
    die sporttasche", then "mich auch bitte": "erinner mich morgen um 7 …"); None otherwise."""
    if not _ME_TOO.search(text) or says_what(_SET_UP.sub(" ", _SAME.sub(" ", _ME_TOO.sub(" ", text))), []):
        return None
    names = "|".join(re.escape(name) for name in members)
    told = re.search(rf"(?<![A-Za-z])({TELLING})\s*({names})(?![A-Za-z])", asked, re.IGNORECASE) if names else None
    if told is None:
        return None
    word = told.group(1)
    me = "我" if CJK.match(word) else {"eri": "mich", "sag": "mir"}.get(word.lower()[:3], "me")
    return f"{asked[: told.start()]}{_telling(word, me)}{asked[told.end() :]}"


def _telling(word: str, name: str) -> str:
    """The words that ask for `name` to be told, in the place of the writer's own ("remind me" → "remind Ben",
    "叫我" → "提醒Ben": "叫Ben" alone would read as calling him)."""
    if word == "叫":
        word = "提醒"
    return f"{word}{name}" if CJK.match(word) else f"{word} {name}"


def _other_thing(asked: str, text: str) -> str | None:
    """The question `asked` with its category's words replaced by the ones `text` names."""
    said, before = synonym_spans(text), synonym_spans(asked)
    if not said or not before:
        return None
    (start, end), (new_start, new_end) = before[0], said[0]
    return asked[:start] + text[new_start:new_end] + asked[end:]


async def _fill(
    run: Run, version: PromptVersion, route: Capability, situation: Situation, model: type[BaseModel]
) -> BaseModel:
    """The model's answer in the route's schema; an invalid one goes back once with what was wrong."""
    schema = constrained_schema(model, situation.choices)
    messages: list[Message] = [
        {"role": "system", "content": version.route_system(route.name)},
        {"role": "user", "content": route.prompt(situation)},
    ]
    run.rounds = 1
    llm = run.deps.llm
    name = f"route_{route.name}"
    response = await run.llm(f"route.{route.name}", lambda: _first_call(run, route, messages, schema, name))
    try:
        return _validated(model, response.content, situation)
    except AnalysisError as first:
        log.info("step3.analysis.repairing", route=route.name, reason=first.reason[:200])
        messages += [
            {"role": "assistant", "content": response.content or ""},
            {
                "role": "user",
                "content": f"That answer was not valid: {first.reason}\nAnswer again with one JSON object.",
            },
        ]
        run.rounds = 2
        repaired = await run.llm(
            f"route.{route.name}.repair", lambda: llm.complete(messages, response_schema=schema, schema_name=name)
        )
        return _validated(model, repaired.content, situation)


async def _first_call(
    run: Run, route: Capability, messages: list[Message], schema: dict[str, Any], name: str
) -> LLMResponse:
    """The capability's call; streamed when the member is watching and the answer holds text written for them
    (`Capability.written`), so that text appears as the model writes it."""
    llm = run.deps.llm
    if route.written is None or run.sink is None or not run.deps.settings.llm.streaming:
        return await llm.complete(messages, response_schema=schema, schema_name=name)
    emit = reply_field.sink(run.sink, route.written)
    return await llm.stream(messages, emit=emit, response_schema=schema, schema_name=name)


def _validated(model: type[BaseModel], raw: str | None, situation: Situation) -> BaseModel:
    return read_answer(model, _forced(raw, situation.choices), {"choices": situation.choices})


def _forced(raw: str | None, choices: dict[str, list[Any]]) -> str | None:
    """The answer with every field that has one choice and a value set to that choice: the engine decided it (money
    received is income), whatever a model without a grammar wrote there."""
    single = {name: values[0] for name, values in choices.items() if len(values) == 1}
    if not single or raw is None:
        return raw
    try:
        data = json.loads(raw)
    except ValueError:
        return raw
    if not isinstance(data, dict):
        return raw
    parts = [data, *(item for value in data.values() if isinstance(value, list) for item in value)]
    for part in parts:
        if isinstance(part, dict):
            part.update({name: value for name, value in single.items() if _forceable(part.get(name))})
    return json.dumps(data)


def _forceable(value: Any) -> bool:
    """A single value the model gave (a choice left empty or a list of them is the model's to make)."""
    return value is not None and not isinstance(value, list | dict)


async def _repair(
    run: Run,
    version: PromptVersion,
    route: Capability,
    situation: Situation,
    model: type[BaseModel],
    first: BaseModel | None,
    plan: list[PlannedCall],
    results: list[StepResult],
) -> tuple[BaseModel | None, list[StepResult]]:
    """One re-planning round: the tools' complaints go back to the model, and the steps that were refused run
    again from its new answer (the ones that succeeded are not repeated)."""
    complaints = "; ".join(f"{r.tool}: {r.error}" for r in results if not r.ok and r.fixable)
    run.note("route.repair", complaints=complaints[:500])
    schema = constrained_schema(model, situation.choices)
    messages: list[Message] = [
        {"role": "system", "content": version.route_system(route.name)},
        {"role": "user", "content": route.prompt(situation)},
        {"role": "assistant", "content": first.model_dump_json() if first is not None else ""},
        {"role": "user", "content": f"The tools refused that: {complaints}\nAnswer again with one JSON object."},
    ]
    llm = run.deps.llm
    name = f"route_{route.name}"
    response = await run.llm(
        f"route.{route.name}.replan", lambda: llm.complete(messages, response_schema=schema, schema_name=name)
    )
    try:
        second = _validated(model, response.content, situation)
    except AnalysisError:
        return first, results
    replanned = route.plan(situation, second)
    if isinstance(replanned, Ask) or len(replanned) != len(plan):
        return first, results
    audience = privacy.requested(situation.text, run.members, run.message.user_id)
    replanned = privacy.apply(replanned, audience, run.members)
    again = [step for step, result in zip(replanned, results, strict=True) if not result.ok and result.fixable]
    rerun = iter(await run_plan(run, again))
    merged = [next(rerun) if not result.ok and result.fixable else result for result in results]
    return second, merged


def _reply(
    run: Run, route: Capability, situation: Situation, answer: BaseModel | None, results: list[StepResult]
) -> str:
    """The route's reply; when it has nothing to say (a step failed) a plain account of what happened. A reply with
    a number that no source holds is replaced by that plain account."""
    text = route.reply(situation, answer, results)
    failed = [r for r in results if not r.ok]
    if failed:
        reasons = "; ".join(str(r.member_reason()) for r in failed)  # never the hint the tool wrote for the model
        text = "\n".join(part for part in (text, say("failed", situation.language, reason=reasons)) if part)
    if not text:
        text = basic_answer(results)
    sources = [situation.text, situation.grounding.to_json(), [r.for_model() for r in results], situation.rows]
    made_up = invented(text, sources)
    if made_up:
        run.note("reply.invented_numbers", numbers=made_up[:10])
        log.warning("reply.invented_numbers", route=route.name, count=len(made_up))
        return basic_answer(results) if results else say("not_found", situation.language)
    return text


def _ask(run: Run, route: str, text: str, ask: Ask) -> tuple[Reply, PendingClarification]:
    pending = PendingClarification(
        inbox_id=run.message.inbox_id,
        question=ask.question,
        options=list(ask.options),
        state={"text": text[:2000], "route": route},
    )
    log.info("step4.clarify.requested", route=route, options=len(ask.options))
    return Reply(ask.question, "clarifying", options=ask.options), pending


def _step(step: str, started: float) -> int:
    return metrics.step_finished(step, time.monotonic() - started)
