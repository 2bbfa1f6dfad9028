"""A change of an existing reminder: cancel, snooze, done ("done" right after one was sent), or a move to another
time ("push the dentist reminder to friday at 10", "吃药的提醒改到晚上九点吧") — never a second reminder."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict

from engine.analysis import PlannedCall
from engine.capabilities._events import retimed, shift, time_only
from engine.capabilities._reminders import about, active_reminders, only_retimed, reminder_text
from engine.capabilities.capability import Ask, Capability, Picked, Reading, Reroute, Said, Situation
from engine.capabilities.event_move import MOVED
from engine.capabilities.forget import FORGET
from engine.capabilities.phrases import say, when_text
from engine.capabilities.reminder import DONT_FORGET, REMIND, reminder_words
from engine.capabilities.words import cues, is_vague, sentences
from engine.executor import StepResult
from engine.grounding import Grounding
from engine.grounding.language import name_pattern

CANCEL = cues(
    r"\bcancel",
    r"\bcall(?:ed)? off",
    r"\bfällt\b.{0,20}\baus\b|\bfallen\b.{0,20}\baus\b|\babgesagt\b",
    # a reminder no longer wanted: "don't need to remind me", "brauchst mich nicht (mehr) erinnern", "不用提醒"
    r"\b(?:stop|don'?t|dont|do not|no need to|no longer|no more|never)\b(?! forget)(?: \w+){0,2} remind",
    r"(?<!vergiss )(?<!vergesst )\b(?:nicht|nich|nimmer|keine?)\b(?: mehr)?(?: (?:mich|uns|dran|daran))? (?:zu )?"
    r"erinner|\berinner\w* (?:mich |uns )?(?:nicht|nimmer)\b|\b(?:hör\w* auf|aufhören)\b.{0,30}\berinner",
    r"取消",
    r"(?:不用|别|不要|不必|无需)(?:再)?提醒",
    r"\bstorn",
    r"\babsagen",
)


SNOOZE = cues(
    r"\bsnooze",
    r"\bremind me again\b",
    r"\blater\b",
    r"\bpostpone",
    r"\bpush (?:it|that) ",
    r"推迟",
    r"晚点",
    r"稍后",
    r"等会",
    r"再提醒",
    r"过\S{1,6}再",
    r"\bspäter",
    r"\bverschieb",
    r"\bschlummer",
    r"\bagain\b",  # said of the reminder just sent: "in 20 min again", "in ner halben stunde nochmal"
    r"\bin a bit\b",
    r"\bnoch ?mal\b",
    r"\bgleich\b",
)


# Dropping something, said of a reminder ("scrap that reminder"); of anything else it is a forget or an undo.
DROP = cues(r"\b(?:scrap|ditch|drop|nix|kill|axe)\b")
# Said of an existing reminder: it should come at another time ("make the plumber one 11 instead", "oma anrufen
# bitte erst übermorgen": only then, not before).
MOVE = cues(
    r"\bpush\b",
    r"\bshift\b",
    r"\bmove\b",
    r"\bchange\b",
    r"\bmake it\b",
    r"\binstead\b|\brather\b",
    r"\bcan wait (?:till|until|til)\b|\breicht (?:auch )?(?:erst )?(?:um|am)\b",  # put off: it can be later
    r"\bverschieb",
    r"\bverleg",
    r"\bschieb",
    r"^\W*还是.{1,10}吧\W*$",  # "还是九点吧": rather at nine
    r"\bänder",
    r"\bstattdessen\b|\b(?:an)?statt\b|\blieber\b|\berst\b",
    r"\bnot (?:at )?\d",  # "at 8 not 7"
    r"改到",
    r"改成",
    r"挪到",
    r"推到",
)
# The last thing spoken of ("actually cancel that"): any reminder may be meant, the newest likeliest.
_THAT = cues(r"\b(?:that|it|this)\b", r"\b(?:das|dies|es)\b", r"它|这个")
# The new time of a move said as a bare hour ("make the bins one 7 instead", "plumber one to 11"): read against the
# reminder's own time (`_moved`).
_BARE_HOUR = re.compile(r"(?<![\d.,:€$£])\b(?P<h>[01]?\d|2[0-3])\b(?!\s*(?:[.,:%°]\d|[€$£]|euro|eur\b|quid|bucks))")
# Every reminder at once ("cancel all reminders", "alle erinnerungen löschen", "取消所有提醒"): a yes first (`consent`).
EVERY_REMINDER = cues(
    r"\b(?:all|every)(?: of)?(?: the| my| our| your)? reminders?\b",
    r"\b(?:alle|sämtliche)(?: meine| unsere| deine)? erinnerungen\b",
    r"(?:所有|全部)(?:的)?提醒|提醒(?:全部|都)",
)
# The reminder itself named ("the dentist reminder", "die Erinnerung", "吃药的提醒"): a move is said of one.
REMINDER = cues(r"\breminders?\b", r"\berinnerung", r"提醒(?!我|他|她|大家)")


# A thing pointed at rather than named ("the plumber thing", "the dry cleaning one", "交水费那个"): it may be a
# reminder, an event or a note — the rows that exist decide (`prepare`).
POINTED = cues(r"\b(?:thing|one)\b", r"\bdas mit\b|\bdie sache mit\b", r"那个|那件事")
NEVER_MIND = cues(r"\bnvm\b|\bnever ?mind\b", r"\bvergiss es\b|\bhat sich erledigt\b", r"算了")
# Said of a reminder: it is no longer wanted.
UNWANTED = cues(
    r"\b(?:dont|don't|do not|no longer) need\b",
    r"\bnot needed\b|\bno need\b|\bnicht (?:mehr )?nötig\b",
    r"\banymore\b",
    r"\bany more\b",
    r"\bnicht mehr\b",
    r"\bbrauch\w* (?:ich|wir) nicht\b",
    r"不需要",
    r"不用了",
    r"不要了",
)


# Only reminders nag or snooze: "stop nagging me about the parcel", "das mit dem blumengießen kannste abstellen",
# "snooze that for 10 minutes".
NAGGING = cues(
    r"\bnag(?:ging)?\b|\bsnooze\b|\bone can stop\b",
    r"\bnerv(?:en|t|st)?\b|\babstellen\b|\bschlummer",
    r"别催|别烦我|别再叫我",
)


# Said right after a reminder was sent: done with it.
DONE_WORDS = cues(
    r"\bdone\b",
    r"\bfinished\b",
    r"\bdid it\b",
    r"\bcompleted?\b",
    r"\berledigt\b",
    r"\bgemacht\b",
    r"完了",
    r"好了",
    r"搞定",
    r"完成",
    r"做了",
    r"已经",
)


DONE = cues(
    r"^\W*(?:done|did it|i did it|finished|all done|completed?|taken|erledigt|fertig|gemacht|"
    r"好了|完成了?|做完了|搞定了?|已经?做了|吃过了|交了)\W*$",
    r"\bmark (?:it|that|this|the [^.!?]{1,40}?) (?:as )?(?:done|complete|completed|finished)\b",
    r"\b(?:als )?erledigt (?:markieren|abhaken)\b|\babhaken\b",
)


_SNOOZE_MINUTES = 10


class ReminderPick(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reminder_id: Annotated[int, Picked]


INSTRUCTIONS = """\
You help a family member change one of their reminders. Give the reminder_id of the reminder
the message is about, from the list given.
Examples:
Reminders: [12] Put the bins out (every Thu 19:00) | [15] Call the dentist (Tue 08:00)
Message: cancel the bins reminder → {"reminder_id":12}
Reminders: [3] 交电费 (周五 09:00) | [4] 去接孩子 (周一 16:30)
Message: 不用提醒我交电费了 → {"reminder_id":3}
"""


class ReminderChange(Capability):
    name = "reminder_change"
    instructions = INSTRUCTIONS
    description = "cancels, snoozes, completes or moves an existing reminder"
    examples = {
        "en": (
            "cancel the bins reminder",
            "snooze that for 10 minutes",
            "done!",
            "push the dentist reminder to friday at 10",
            "don't need the medicine reminder anymore",
            "remind me again in an hour",
            "later pls",
            "the car insurance one can go to monday",
            "stop nagging me about the parcel, already picked it up",
            "all done, bins are out ✅",
            "make the bins one 7 instead of 8",
            "give me 5 more min",
            "the water plants one can stop now, its raining all week",
        ),
        "de": (
            "lösch die Erinnerung an den Müll",
            "später erinnern",
            "erledigt",
            "verschieb die Erinnerung auf 18 Uhr",
            "hab ich schon gemacht ✅",
            "noch 10 min bitte",
            "die erinnerung wegen paket brauch ich nicht mehr",
            "stromrechnung lieber erst montag",
            "hör auf mich wegen dem vermieter zu nerven, hab angerufen",
            "das mit dem blumengießen kannste abstellen",
            "in ner stunde nochmal bitte",
            "jo is erledigt danke",
        ),
        "zh": (
            "取消倒垃圾的提醒",
            "过十分钟再提醒我",
            "吃药的提醒改到晚上九点吧",
            "好了",
            "搞定了✅",
            "等会儿再说 半小时后再叫我",
            "取快递那个提醒不要了 已经拿了",
            "交电费的提醒挪到周一",
            "浇花那个以后不用提醒了",
            "做完了 别再提醒了",
            "再给我五分钟",
        ),
    }
    refines = (
        "reminder",
        "forget",
        "calendar",
        "event_reminder",
        "event_change",
        "update",
        "fact",
        "lookup",
        "sum",
        "shared_list",
        "expense",
        "budget",
    )
    tools = ("list_reminders", "cancel_reminder", "snooze_reminder", "complete_reminder", "move_reminder")
    needs_cue = True

    def claims(self, reading: Reading) -> bool:
        text = reading.text
        reminded = reminder_words(text)
        keep_in_mind = DONT_FORGET.search(text) is not None
        if (CANCEL.search(text) or DROP.search(text)) and reminded:
            return True
        if reminded and not keep_in_mind and (FORGET.search(text) or UNWANTED.search(text)):
            return True
        if reading.reminder_just_sent and answers_a_reminder(text) and not reading.grounding.money:
            return True
        if REMINDER.search(text) and DONE.search(text) and not reading.question:  # "mark the bins reminder as done"
            return True
        if NAGGING.search(text) and not keep_in_mind and not reading.question:
            return True
        moved = (MOVE.search(text) or shift(text, reading.grounding)) is not None and REMINDER.search(text) is not None
        if (SNOOZE.search(text) and REMIND.search(text) or moved) and not reading.grounding.repeats:
            return True
        return pointed_at(reading)

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        fired = situation.history.fired
        rows: list[dict[str, Any]] = []
        if fired and answers_a_reminder(situation.text) and not CANCEL.search(situation.text):
            newest = fired[0]
            rows = [{"reminder_id": newest.reminder_id, "text": newest.text, "next_at": None, "rrule": None}]
        else:
            rows = await active_reminders(situation)
        named = about(situation, rows)
        pointed = POINTED.search(situation.text) or not _THAT.search(situation.text)
        if pointed and not reminder_words(situation.text) and not fired:
            # Pointed at or said by its words, not named a reminder nor "that": a reminder about the same thing,
            # else the event or note it is about.
            if not named:
                return Reroute("event_change" if MOVE.search(situation.text) else "unclear")
            rows = named
        if not rows:  # "remind her later" with nothing to put off asks for a new reminder: what, and when
            if REMIND.search(situation.text) and not _ends_a_reminder(situation.text):
                return Reroute("reminder")
            if not reminder_words(situation.text):  # "can you move it to 4" with no reminder at all: what is meant?
                return Reroute("unclear")
            if (owner := _someone_elses(situation)) is not None:  # "lösch annas erinnerungen"
                return Said(say("not_your_reminders", situation.language, name=owner))
            return Said(say("no_reminders", situation.language))
        situation.rows = rows
        situation.choices["reminder_id"] = [row["reminder_id"] for row in rows]
        if len(rows) > 1 and len(named) == 1:  # "cancel the bins reminder": the words name one, no model needed
            situation.decided = ReminderPick(reminder_id=named[0]["reminder_id"])
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return ReminderPick if len(situation.rows) > 1 and situation.decided is None else None

    def prompt(self, situation: Situation) -> str:
        listed = " | ".join(f"[{row['reminder_id']}] {reminder_text(row)}" for row in situation.rows)
        return f"Reminders: {listed}\nMessage: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        picked = answer if isinstance(answer, ReminderPick) else situation.decided
        reminder_id = picked.reminder_id if isinstance(picked, ReminderPick) else situation.rows[0]["reminder_id"]
        action = change_action(situation.text, situation.grounding)
        if action == "snooze" and not situation.history.fired and shift(situation.text, situation.grounding):
            action = "move"  # "noch ne stunde später" of a reminder not sent yet: an hour after its own time
        if action == "move":
            return _moved(situation, next(row for row in situation.rows if row["reminder_id"] == reminder_id))
        if action == "snooze":
            args: dict[str, Any] = {"reminder_id": reminder_id}
            moments = [m for m in situation.grounding.moments if m.has_time]
            if situation.grounding.minutes:
                args["minutes"] = situation.grounding.minutes[0]
            elif moments:
                args["until"] = moments[0].at.isoformat(timespec="minutes")
            else:
                args["minutes"] = _SNOOZE_MINUTES
            return [PlannedCall(id="s1", tool="snooze_reminder", args=args)]
        tool = "complete_reminder" if action == "done" else "cancel_reminder"
        if action == "cancel" and EVERY_REMINDER.search(situation.text):  # each one, once the member says yes
            every = [row["reminder_id"] for row in situation.rows]
            return [PlannedCall(id=f"s{n}", tool=tool, args={"reminder_id": i}) for n, i in enumerate(every, 1)]
        return [PlannedCall(id="s1", tool=tool, args={"reminder_id": reminder_id})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        result = results[-1].result or {}
        language = situation.language
        if results[0].tool == "move_reminder":
            at = datetime.fromisoformat(str(result["next_at"])).replace(tzinfo=None)
            return say("reminder_moved", language, when=when_text(at, language), text=result["text"])
        if results[0].tool == "snooze_reminder":
            at = datetime.fromisoformat(str(result["next_at"])).replace(tzinfo=None)
            return say("snoozed", language, when=when_text(at, language), text=result["text"])
        key = "done" if results[0].tool == "complete_reminder" else "cancelled"
        return say(key, language, text=result["text"])


def change_action(text: str, grounding: Grounding | None = None) -> Literal["cancel", "move", "snooze", "done"]:
    """What the member does to the reminder: the words say; a message that only points at it ("the bins
    reminder", "don't need it anymore") stops it. Put off to another day ("电费那个提醒推迟到周五", "postpone it to
    friday") it moves there at its own time of day."""
    if CANCEL.search(text):
        return "cancel"
    named = REMINDER.search(text) is not None
    pointed = named or POINTED.search(text) is not None
    if pointed and grounding is not None and shift(text, grounding) is not None:
        return "move"  # "the dentist reminder half an hour earlier", "das mit oma anrufen eine stunde nach hinten"
    if MOVE.search(text) and (pointed or not reminder_words(text)):
        return "move"  # "…reminder to friday", "the plumber one 11 instead", "oma anrufen bitte erst übermorgen"
    if SNOOZE.search(text):
        to_a_day = grounding is not None and not grounding.minutes and any(not m.has_time for m in grounding.moments)
        return "move" if to_a_day else "snooze"
    if grounding is not None and only_retimed(text, grounding):
        return "move"  # "no wait, tuesday", "mach lieber ne halbe stunde später": said of the one just asked for
    if answers_a_reminder(text):
        return "done"
    return "cancel"


def pointed_at(reading: Reading) -> bool:
    """A change said of a thing pointed at — moved to a time ("push the plumber thing to 4pm", "make the plumber one
    11 instead", "交水费那个改到明天早上九点") or dropped ("nvm the dry cleaning one") — or of a thing said by its words
    with a new day or time ("oma anrufen bitte erst übermorgen"), also when asked as a question ("can the bins one be
    at 8 instead?"). The rows that exist decide what it is (`prepare`)."""
    text = reading.text
    if (reading.question and not MOVE.search(text)) or reading.grounding.repeats or reading.grounding.money:
        return False
    if is_vague(text):  # "the thing from this morning, change it" points at nothing it names, nor says to what
        return False
    moved = MOVE.search(text) and (reading.grounding.moments or _BARE_HOUR.search(text))
    if not POINTED.search(text):  # a reminder said by its words and "erst übermorgen" (an event's move is its own)
        return bool(MOVE.search(text) and reading.grounding.moments and not (REMIND.search(text) or MOVED.search(text)))
    return bool(moved or NEVER_MIND.search(text))


def answers_a_reminder(text: str) -> bool:
    """A snooze, or a short "done", said of the reminder just sent."""
    return bool(DONE.search(text) or SNOOZE.search(text) or _short_done(text))


def _short_done(text: str) -> bool:
    """ "got it, done", "打完了": a short message with a word of having done it."""
    return len(text.split()) <= 6 and len(text) <= 40 and DONE_WORDS.search(text) is not None


def _moved(situation: Situation, row: dict[str, Any]) -> list[PlannedCall] | Ask:
    """The reminder at its new time: a one-off one fires then instead; a repeating one keeps its rule from the new
    time on ("swimming moved to half 5 from now on"); the same row either way."""
    moments = sorted(situation.grounding.moments, key=lambda m: not m.has_time)
    current = datetime.fromisoformat(str(row["next_at"])).replace(tzinfo=None) if row.get("next_at") else None
    delta = shift(situation.text, situation.grounding)
    if current is not None and delta is not None:  # "half an hour earlier": from the reminder's own time
        return _at(row, current + delta)
    hour = _BARE_HOUR.search(situation.text)
    if not moments and current is not None and hour is not None:  # "the plumber one 11 instead": 11:00 that day
        return _at(row, retimed(current, current.replace(hour=int(hour["h"]), minute=0), hour.group(0)))
    if not moments:
        return Ask(say("ask_when_instead", situation.language))
    moment = moments[0]
    if current is not None and moment.has_time and time_only(moment.text):  # "to 6pm": the same day, a new time
        at = retimed(current, moment.at, moment.text)
    elif current is not None and not moment.has_time:  # "to Friday": the same time of day on the new day
        at = datetime.combine(moment.at.date(), current.time())
    else:
        at = moment.at
    return _at(row, at)


def _at(row: dict[str, Any], at: datetime) -> list[PlannedCall]:
    args = {"reminder_id": row["reminder_id"], "when": at.isoformat(timespec="minutes")}
    return [PlannedCall(id="s1", tool="move_reminder", args=args)]


def _ends_a_reminder(text: str) -> bool:
    """A sentence of the message ends a reminder: a word of ending beside a word of reminding ("die erinnerung kannst
    du löschen", "scrap that reminder"). One in another sentence ends something else: "remind me at 6 to water the
    plants. btw you're allowed to delete stuff" asks for a reminder."""
    return any(
        REMIND.search(sentence)
        and (
            CANCEL.search(sentence)
            or DROP.search(sentence)
            or (FORGET.search(sentence) and not DONT_FORGET.search(sentence))
        )
        for sentence in sentences(text)
    )


def _someone_elses(situation: Situation) -> str | None:
    """The other member whose reminders the message is about ("anna's reminders", "Annas Erinnerungen", "Anna的提醒"),
    when the writer has none of their own to change: each member changes only the reminders they set or get."""
    run = situation.run
    for member in run.members:
        named = (name_pattern(name).search(situation.text) for name in (member.name, f"{member.name}s"))  # "annas"
        if member.id != run.message.user_id and any(named):
            return member.name
    return None
