"""Grounding: what a message says about money, time and people, resolved deterministically before the model reads
it — amounts with currencies, moments on the member's clock, repetitions as RRULEs, periods with their first and
last day, the category its words name and the household members it names. The model picks among these candidates;
it never does calendar arithmetic or reads number
formats itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo

from engine.grounding.categories import category_of
from engine.grounding.language import CJK, language_of, name_pattern
from engine.grounding.moments import Found, after, find_minutes, find_moments
from engine.grounding.money import Money, find_currencies, find_money, with_arabic_numerals
from engine.grounding.periods import Span, find_span
from engine.grounding.repeats import find_repeat


@dataclass(frozen=True)
class Moment:
    """A point in time the message names, on the member's wall clock (naive)."""

    key: str  # "t1", "t2" … as the model refers to it
    text: str  # as the member wrote it
    at: datetime
    has_time: bool  # False: only a day was named ("tomorrow"); `at` is then that day at 09:00
    half_open: bool = False  # a morning hour whose half of the day the words leave open ("heute um 8")


@dataclass(frozen=True)
class Repeat:
    """A repetition ("every Monday at 7:30") as an RFC 5545 rule with its first occurrence."""

    key: str  # "r1" …
    text: str
    rrule: str
    first: datetime  # naive, on the member's wall clock
    has_time: bool = True  # False: no time of day was named ("on tuesdays"); `first` is then that day at 09:00


@dataclass(frozen=True)
class Grounding:
    language: str  # "en", "de" or "zh": the language the member wrote in
    money: tuple[Money, ...] = ()
    moments: tuple[Moment, ...] = ()
    repeats: tuple[Repeat, ...] = ()
    minutes: tuple[int, ...] = ()  # durations ("30 minutes", "2 hours"), for snoozing
    currencies: tuple[str, ...] = ()  # currencies named, with or without an amount
    period: str | None = None  # the filter language's name for the period asked about ("this_month"), if it has one
    people: tuple[str, ...] = ()  # household members named in the message
    numbers: tuple[Decimal, ...] = field(default=())  # every number written, money or not
    span: Span | None = None  # the period asked about with its first and last day, named or not ("last weekend")
    category: str | None = None  # the expense category the words name ("window cleaner": household), if any
    income_category: str | None = None  # the income category the words name ("Gehalt": salary), if any

    def to_json(self) -> dict[str, Any]:
        plain: dict[str, Any] = _jsonable(asdict(self))
        return plain

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Grounding:
        return cls(
            language=data["language"],
            money=tuple(Money(Decimal(m["amount"]), m["currency"], m["text"]) for m in data.get("money", ())),
            moments=tuple(
                Moment(m["key"], m["text"], datetime.fromisoformat(m["at"]), m["has_time"], m.get("half_open", False))
                for m in data.get("moments", ())
            ),
            repeats=tuple(
                Repeat(r["key"], r["text"], r["rrule"], datetime.fromisoformat(r["first"]), r.get("has_time", True))
                for r in data.get("repeats", ())
            ),
            minutes=tuple(data.get("minutes", ())),
            currencies=tuple(data.get("currencies", ())),
            period=data.get("period"),
            people=tuple(data.get("people", ())),
            numbers=tuple(Decimal(n) for n in data.get("numbers", ())),
            span=_span(data.get("span")),
            category=data.get("category"),
            income_category=data.get("income_category"),
        )

    def describe(self) -> str:
        """The candidates as the model reads them, one kind per line; empty when nothing was found."""
        lines = []
        if self.money:
            lines.append("amounts: " + "; ".join(f"{m.amount} {m.currency or '(no currency)'}" for m in self.money))
        if self.moments:
            lines.append("times: " + "; ".join(f"{m.key}={_wall(m.at, m.has_time)} ({m.text})" for m in self.moments))
        if self.repeats:
            lines.append(
                "repeats: "
                + "; ".join(f"{r.key}={r.rrule} from {_wall(r.first, True)} ({r.text})" for r in self.repeats)
            )
        if self.span is not None:
            lines.append(f"period: {self.span.first} to {self.span.last} ({self.span.text})")
        if self.people:
            lines.append("members named: " + ", ".join(self.people))
        return "\n".join(lines)


_FROM_NOW = re.compile(
    r"\bin\b|\bnach\b|\bfrom now\b|\blater\b|后|以后|之后|过(?=\S{1,4}(?:分钟|小时|钟头))", re.IGNORECASE
)
_MAX_TEXT = 2000  # grounding reads the start of a very long message only; it must never hold the worker up
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def ground(text: str, now: datetime, timezone: str, members: Sequence[str]) -> Grounding:
    """Everything `text` says about money, time and people, resolved against aware `now` in `timezone`."""
    text = text[:_MAX_TEXT]
    tz = ZoneInfo(timezone)
    money = find_money(text)
    repeat = find_repeat(text, now, tz)
    moments = [] if repeat is not None else find_moments(text, now, tz)
    minutes = find_minutes(text)
    span = find_span(text, now.astimezone(tz).date(), timezone)
    if not moments and repeat is None and minutes and _FROM_NOW.search(text):  # "in 30 mins"
        at = after(now.astimezone(tz), timedelta(minutes=minutes[0])).replace(second=0, microsecond=0)
        moments = [Found(at, True, f"in {minutes[0]} min")]
    return Grounding(
        language=language_of(text),
        money=tuple(money),
        moments=tuple(Moment(f"t{n}", m.text, m.at, m.has_time, m.half_open) for n, m in enumerate(moments, 1)),
        repeats=() if repeat is None else (Repeat("r1", repeat.text, repeat.rrule, repeat.first, repeat.has_time),),
        minutes=tuple(minutes),
        currencies=tuple(find_currencies(text)),
        period=span.name if span is not None else None,
        people=tuple(name for name in members if name_pattern(name).search(text)),
        numbers=tuple(_numbers(text)),
        span=span,
        category=category_of(text, "expense"),
        income_category=category_of(text, "income"),
    )


def _numbers(text: str) -> list[Decimal]:
    """The numbers written in `text`, in order, each once; a decimal comma is read as a point, and Chinese numerals
    with a multiplier are numbers too ("写错了，是二百三": 230)."""
    found: list[Decimal] = []
    for raw in _NUMBER.findall(with_arabic_numerals(text) if CJK.search(text) else text):
        try:
            value = Decimal(raw.replace(",", "."))
        except InvalidOperation:
            continue
        if value not in found:
            found.append(value)
    return found


def _wall(at: datetime, has_time: bool) -> str:
    return at.strftime("%a %Y-%m-%d %H:%M") if has_time else at.strftime("%a %Y-%m-%d")


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, (Decimal, date)):
        return str(value) if isinstance(value, Decimal) else value.isoformat()
    return value


def _span(data: dict[str, Any] | None) -> Span | None:
    if data is None:
        return None
    return Span(data["text"], date.fromisoformat(data["first"]), date.fromisoformat(data["last"]), data.get("name"))


__all__ = ["Grounding", "Moment", "Money", "Repeat", "Span", "category_of", "find_money"]
