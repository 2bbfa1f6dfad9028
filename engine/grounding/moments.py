"""Moments a message names ("tomorrow at 9", "next Tuesday at 3:30pm", "in 2 hours", "last Friday", "明天下午三点",
"morgen um 9") as wall times on the member's clock, and durations ("30 minutes", "半小时").

English and German: the message is split into clauses (at punctuation); in each, the days (`days.py`) and the
times of day (`clocks.py`) are paired in the order they are written, so "the play is on Friday at 17:00, remind me
Friday at 16:00" names two moments. A time with no day of its own takes the day named just before it when that day
has not passed ("tomorrow at 9 and again at 5"), otherwise it is the next time the clock shows it. A day with no
time takes its part of the day ("Friday evening": 19:00) or stands as a day (09:00, `has_time` False). Chinese is
jionlp's. A bare number is never a moment ("2 pills", "400 a month"); "now" is none either ("that's all for now").
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from engine.grounding.clocks import Clock, find_clocks, part_of_day
from engine.grounding.days import Day, find_days
from engine.grounding.language import CJK, language_of
from engine.grounding.spelling import normalised, with_digits

with contextlib.redirect_stdout(io.StringIO()):  # jionlp prints a banner on import
    import jionlp

# Where one statement ends and the next begins; a full stop after a number ("am 3.12.") or a decimal comma is none.
_CLAUSE_END = re.compile(r"[;!?\n]+|(?<=[^\d\s])\.|,(?!\d)|(?<!\d),|\s[-–—]\s|\b(?:but|aber|then|dann)\b")
# A weekday and the date it names, a comma between ("am samstag, 5.12. um 15 uhr", "saturday, dec 5th at 3pm"): one
# statement, so that the date is the day (`days.find_days`) and not a second day beside the weekday.
_MONTHS = r"(?:jan|feb|mär|mar|apr|mai|may|jun|jul|aug|sep|okt|oct|nov|dez|dec)"
_WEEKDAY_DATE = re.compile(
    r"(?:(?<=day)|(?<=tag)|(?<=mittwoch)),"
    rf"(?=\s*(?:den\s+|the\s+)?(?:\d{{1,2}}(?:\.\s?\d{{1,2}}|st|nd|rd|th|\.?\s+(?:of\s+)?{_MONTHS})|{_MONTHS}[a-z]*\.?\s+\d))"
)
# An occasion someone has got: "mias got a birthday party saturday at 2", "ben's got his first match on sunday".
_OCCASION = (
    r"(?:party|appointment|appt|match|game|lesson|class|training|practice|rehearsal|playdate|sleepover|meeting|"
    r"concert|recital|test|exam|trip|check-?up|interview)s?"
)
# What a sentence about the past says ("paid on Friday": the Friday that was), unless it also speaks of what comes;
# "has got" ("mia's got a party saturday") is no past.
# "hat"/"habe" speak of the past only with a participle ("hat 40 euro gekostet", "hab ihn abgeholt"); "mia hat
# freitag ballett" is a plan.
_PARTICIPLE = r"(?:\w*ge\w{2,}(?:t|en)|(?:be|er|ver|ent|zer|emp)\w{2,}t|\w{3,}iert)"
_PAST = re.compile(
    r"\b(?:paid|spent|bought|was|were|did|had|went|gave|ate|came|took|met|saw|cost|forgot|"
    rf"(?<!'s )(?<!’s )(?<!has )(?<!have )(?<!'ve )got"
    rf"(?! (?:a|an|his|her|their|my|our) (?:[\w-]+ ){{0,2}}{_OCCASION}\b)|"
    r"hatte|hatten|war|waren|gekauft|bezahlt|ausgegeben|gezahlt|gegessen|gewesen|vergessen)\b"
    rf"|\b(?:habe|hab|hat)\b(?=.*\b{_PARTICIPLE}\b)"
)
_FUTURE = re.compile(
    r"\b(?:remind|will|going to|gonna|plan|planned|next|moved?|push|shift|postponed?|rescheduled?|changed?|"
    r"need|needs|have to|must|erinner\w*|wird|werden|nächste\w*|kommende\w*|soll|muss|verschoben|verlegt)\b|'ll\b"
)
# A moment said not to be the one ("yesterday, not today"): it names no moment.
_NOT = re.compile(r"\b(?:not|nicht)\s+(?:on\s+|at\s+|am\s+|um\s+)?[\w:.]+")
# Real time from now or before now: "in 2 hours", "in half an hour", "30 minutes ago", "vor 2 Stunden".
_HOURS = {"minute": 1, "min": 1, "minuten": 1, "hour": 60, "h": 60, "stunde": 60}
_SPAN = r"(?P<n>\d+(?:[.,]\d+)?|an?|one|half an?|einer halben|'?ner halben|einer|'?ner|einem|eine|anderthalb)"
_SPAN_UNIT = r"(?P<unit>minutes?|mins?|minuten|min|hours?|h|stunden?)\b"
_RELATIVE: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), sign)
    for pattern, sign in (
        (rf"\b(?:in|within|nach)\s+{_SPAN}\s*{_SPAN_UNIT}", 1),
        (rf"\b{_SPAN}\s*{_SPAN_UNIT}\s*(?:from now|later|später)", 1),
        (rf"\b{_SPAN}\s*{_SPAN_UNIT}\s*ago\b", -1),
        (rf"\bvor\s+{_SPAN}\s*{_SPAN_UNIT}", -1),
        # "in 20" with no unit before what to do: minutes ("remind me in 20 to take the cake out")
        (
            r"\bin\s+(?P<n>[5-9]|[1-8]\d|90)(?P<unit>)(?=\s*(?:[,.!]|$|\b(?:to(?!\s*\d)|and|pls|please|bitte|ans?|zum|zur)\b))",
            1,
        ),
    )
)
# Durations: a number (or "half") and a unit, for snoozing.
_UNITS = {
    "minute": 1, "min": 1, "mins": 1, "minuten": 1, "分钟": 1, "分": 1,
    "hour": 60, "hr": 60, "hrs": 60, "h": 60, "stunde": 60, "stunden": 60, "小时": 60, "个小时": 60, "钟头": 60,
    "day": 1440, "tag": 1440, "tage": 1440, "天": 1440,
}  # fmt: skip
_DURATION = re.compile(
    r"(?P<n>\d+(?:[.,]5)?|an?|one|half an?|eine?|einer halben|'?ne|半|一|两|三|四|五|十|十五|二十|三十|四十五)\s*"
    r"(?P<unit>minutes?|mins?|minuten|hours?|hrs?|h\b|stunden?|days?|tage?|分钟|个小时|小时|钟头|天)",
    re.IGNORECASE,
)
_WORD_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "ein": 1, "eine": 1, "einer": 1, "half a": 0.5, "half an": 0.5, "einer halben": 0.5,
    "anderthalb": 1.5, "einem": 1, "ner halben": 0.5, "'ner halben": 0.5, "ner": 1, "'ner": 1, "ne": 1, "'ne": 1,
    "半": 0.5, "一": 1, "两": 2, "三": 3, "四": 4, "五": 5, "十": 10, "十五": 15,
    "二十": 20, "三十": 30, "四十五": 45,
}  # fmt: skip
_ZH_RELATIVE_CLOCK = re.compile(r"(小时|钟头|分钟)(之)?后")


@dataclass(frozen=True)
class Found:
    """One moment as parsed, before it gets its key."""

    at: datetime  # naive wall time
    has_time: bool
    text: str
    half_open: bool = False  # a morning hour whose half of the day the words leave open ("heute um 8")


def find_moments(text: str, now: datetime, tz: ZoneInfo) -> list[Found]:
    """The moments `text` names, in the order written, on the wall clock of `tz`; `now` is aware."""
    local_now = now.astimezone(tz)
    return _chinese(text, local_now) if CJK.search(text) else _english_german(text, local_now)


def find_minutes(text: str) -> list[int]:
    """Durations in minutes ("snooze 30 minutes", "半小时", "2 Stunden", "zwei stunden vorm flug")."""
    if not CJK.search(text):
        text = with_digits(text, language_of(text))
    found = []
    for match in _DURATION.finditer(text):
        raw = match.group("n").lower()
        count = _WORD_NUMBERS.get(raw)
        if count is None:
            count = float(raw.replace(",", "."))
        unit = match.group("unit").lower()
        factor = next((v for k, v in _UNITS.items() if unit == k or unit.rstrip("s") == k or unit.rstrip("n") == k), 1)
        minutes = int(count * factor)
        if minutes > 0:
            found.append(minutes)
    if re.search(r"半小时|half an hour|halbe stunde", text, re.IGNORECASE) and 30 not in found:
        found.append(30)
    return found


def after(now: datetime, delta: timedelta) -> datetime:
    """The wall time `delta` of real time after aware `now`: through UTC, since adding to an aware datetime adds to
    its wall clock and is an hour off across a daylight-saving change."""
    return (now.astimezone(UTC) + delta).astimezone(now.tzinfo).replace(tzinfo=None)


def _clauses(text: str) -> list[str]:
    """`text` in the statements it is made of, for grammars that read one statement at a time."""
    return [part for part in _CLAUSE_END.split(_WEEKDAY_DATE.sub(" ", text)) if part and part.strip()]


def _is_past(clause: str) -> bool:
    """Whether a clause speaks of what happened rather than of what is to come."""
    return _PAST.search(clause) is not None and _FUTURE.search(clause) is None


@dataclass
class _Group:
    """A day and a time of day written together, with where they sit in the clause."""

    day: Day | None = None
    clock: Clock | None = None
    at: datetime | None = None  # a moment in real time ("in 2 hours"): complete on its own
    start: int = 0
    end: int = 0


def _english_german(text: str, now: datetime) -> list[Found]:
    wall = now.replace(tzinfo=None, second=0, microsecond=0)
    normal = _NOT.sub(" ", normalised(text, language_of(text)))
    found: list[Found] = []
    last_day: date | None = None
    for clause in _clauses(normal):
        groups = _groups(clause, now, _is_past(clause))
        for index, group in enumerate(groups):
            region = clause[group.start : groups[index + 1].start if index + 1 < len(groups) else len(clause)]
            moment = _moment(group, region, wall, last_day)
            found.append(moment)
            if group.day is not None or group.at is not None:
                last_day = moment.at.date()
    return found


def _groups(clause: str, now: datetime, past: bool) -> list[_Group]:
    """The clause's days, times of day and real-time spans, joined in the order written: a day and a time each
    join the group before them unless it has one of their kind already."""
    items: list[tuple[int, int, Day | Clock | datetime]] = []
    relative = [(m, sign) for pattern, sign in _RELATIVE for m in pattern.finditer(clause)]
    for match, sign in relative:
        at = _relative(match, sign, now)
        if at is not None:
            items.append((match.start(), match.end(), at))
    outside = _blank(clause, [(m.start(), m.end()) for m, _ in relative])
    items += [(day.start, day.end, day) for day in find_days(outside, now.date(), past)]
    items += [(clock.start, clock.end, clock) for clock in find_clocks(outside)]
    groups: list[_Group] = []
    for start, end, item in sorted(items, key=lambda i: i[0]):
        current = groups[-1] if groups else None
        if isinstance(item, datetime):
            groups.append(_Group(at=item, start=start, end=end))
            continue
        kind = "day" if isinstance(item, Day) else "clock"
        if current is None or current.at is not None or getattr(current, kind) is not None:
            current = _Group(start=start)
            groups.append(current)
        setattr(current, kind, item)
        current.end = end
    return groups


def _moment(group: _Group, region: str, wall: datetime, last_day: date | None) -> Found:
    written = region[: group.end - group.start].strip()
    if group.at is not None:
        return Found(group.at, True, written)
    if group.clock is None:
        assert group.day is not None
        part = part_of_day(region)  # "Friday evening": 19:00
        return Found(_on(group.day.day, part[0] if part else 9, 0), part is not None, written)
    hour, minute = group.clock.hour, group.clock.minute
    if group.day is not None:
        at = _on(group.day.day, hour, minute)
        open_half = not group.clock.half_said and hour < 12
        return Found(at + timedelta(days=7) if group.day.rolls and at <= wall else at, True, written, open_half)
    if last_day is not None and last_day >= wall.date():  # "tomorrow at 10, remind me at 8"
        return Found(_on(last_day, hour, minute), True, written)
    today = wall.replace(hour=hour, minute=minute)
    return Found(today if today > wall else today + timedelta(days=1), True, written)


def _on(day: date, hour: int, minute: int) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute)


def _relative(match: re.Match[str], sign: int, now: datetime) -> datetime | None:
    raw = match.group("n").lower()
    count = _WORD_NUMBERS.get(raw)
    if count is None:
        count = float(raw.replace(",", "."))
    unit = match.group("unit").lower() or "minute"
    minutes = next(v for k, v in _HOURS.items() if unit.startswith(k)) * count
    if not 0 < minutes <= 60 * 24 * 7:
        return None
    return after(now, timedelta(minutes=sign * minutes)).replace(second=0, microsecond=0)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the spans replaced by spaces, so that positions stay as they are."""
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


# "现在" (now, these days) before a time of day is an adverb: "校车现在早上7点40到" is 07:40, which jionlp reads as
# ten o'clock plus 40 minutes.
_NOW_BEFORE_CLOCK = re.compile(
    r"(?:现在|目前|如今)(?=\s*(?:早上|早晨|上午|中午|下午|傍晚|晚上|\d|[一二三四五六七八九十两]+点))"
)


# A festival's name before a thing of the festival names the thing, not a day: "圣诞装饰放在阁楼" (the Christmas
# decorations), "中秋月饼", "春节礼物买好了" — but "圣诞去奶奶家", "圣诞前", "国庆出去玩" are days.
_FESTIVAL_BEFORE_NOUN = re.compile(
    r"(?:圣诞|中秋|端午|国庆|元旦|元宵|重阳|七夕|清明|春节|新年|情人)节?(?=装饰|树|礼物|礼品|月饼|粽子|汤圆|晚会|晚餐|大餐|"
    r"贺卡|卡片|蛋糕|袜子|帽子|灯|彩灯|衣服|红包|对联|歌|电影|老人|饼干|零食|购物|用品|装扮|布置|花|活动|演出)"
)


# A measure right after the hour ("晚上8点38度5", "8点37℃"): its number is a temperature or a weight, not the minutes,
# so the hour ends at 点.
_MEASURE_AFTER_HOUR = re.compile(r"(?<=点)(?=\d+(?:[.,]\d+)?\s*(?:度|℃|°|公斤|斤|千克|kg|毫升|ml|岁))", re.IGNORECASE)


_ZH_NOW = frozenset({"现在", "此刻", "目前", "如今", "当前", "眼下"})


def _chinese(text: str, now: datetime) -> list[Found]:
    wall = now.replace(tzinfo=None, second=0, microsecond=0)
    text = _NOW_BEFORE_CLOCK.sub(lambda match: " " * len(match.group()), text)
    text = _MEASURE_AFTER_HOUR.sub(",", text)
    found = []
    for entity in _jionlp(text, wall):
        detail = entity["detail"]
        if detail["type"] not in ("time_point", "time_span"):
            continue
        if _festival_noun(text, entity["text"]) or entity["text"].strip() in _ZH_NOW:
            continue  # "现在告诉我…" (now tell me) names no moment, as "now" does not
        moment = _chinese_point(detail["time"], wall, entity["text"])
        if moment is not None and _ZH_RELATIVE_CLOCK.search(entity["text"]):  # jionlp adds hours to the wall clock
            moment = Found(after(now, moment.at - wall), True, moment.text)
        if moment is not None:
            found.append(moment)
    return found


def _festival_noun(text: str, said: str) -> bool:
    """Whether jionlp's entity is a festival's short name used before a noun (`_FESTIVAL_BEFORE_NOUN`)."""
    return any(match.group() == said for match in _FESTIVAL_BEFORE_NOUN.finditer(text))


def jionlp_times(text: str, wall: datetime) -> list[dict[str, Any]]:
    """jionlp's time entities of `text` relative to the naive wall time `wall` (never a timestamp: jionlp would read
    it in the server's timezone)."""
    return _jionlp(text, wall)


def _jionlp(text: str, wall: datetime) -> list[dict[str, Any]]:
    logger = logging.getLogger()
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # jionlp logs tracebacks of parses it recovers from on the root logger
    try:
        return list(jionlp.ner.extract_time(text, time_base=wall, with_parsing=True))
    except Exception:  # noqa: BLE001 — a parser failure means "no moment found", never a failed message
        return []
    finally:
        logger.setLevel(level)


def _chinese_point(times: Any, wall: datetime, text: str) -> Found | None:
    if not isinstance(times, list) or "inf" in times or len(times) < 2:
        return None
    start, end = (datetime.fromisoformat(value) for value in times[:2])
    if end - start > timedelta(days=7):
        return None  # a month or a season ("今年夏天") is a period, not a moment
    day_only = start.hour == 0 and start.minute == 0 and end - start >= timedelta(hours=23, minutes=59)
    if day_only:
        return Found(start.replace(hour=9), False, text)
    if start < wall and start.date() == wall.date() and not re.search("今|刚|前", text):
        start += timedelta(days=1)  # "晚上八点" when eight has passed today: tomorrow's
    return Found(start, True, text)
