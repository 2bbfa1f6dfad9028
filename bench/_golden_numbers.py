"""Numbers in replies: which numbers a reply states, and whether each comes from somewhere.

A number is grounded when it appears in what the case gave or made: the member's messages, the seeds, the
household's rows at reply time, or a tool result the engine journaled. Dates and times count in any common form:
2026-11-24, 24.11., 11/24, 09:00, 9 pm — each of their parts is grounded by a moment in the sources. Numbers
written as words in the sources (three, drei, 三十五) ground their digits; a reply is read by its digits only.
Zero is always grounded: it is how a reply says that nothing matched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from _golden_time import ZONE

_OLD_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_RUN = re.compile(r"\d+(?:[.,:/\-]\d+)*")
_LIST_MARKER = re.compile(r"^(\s*(?:[-*•]\s*)?)\d+[.)](?=\s)", re.M)
_ISO_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?)?")
_CN_RUN = re.compile(r"[零〇一二两三四五六七八九十百千万]+")
_CN_DIGITS = dict(zip("零〇一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_WORDS = {
    # English
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "hundred": 100, "half": 30, "quarter": 15, "once": 1, "twice": 2, "noon": 12, "midnight": 0,
    # German
    "ein": 1, "eine": 1, "eins": 1, "einen": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6,
    "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12, "fünfzehn": 15, "zwanzig": 20,
    "dreißig": 30, "halb": 30, "halbe": 30, "viertel": 15, "mittag": 12,
}  # fmt: skip
_WORD = re.compile(r"[a-zäöüß]+")


@dataclass(frozen=True)
class Sources:
    """What the numbers of one reply may come from."""

    texts: tuple[str, ...] = ()
    numbers: tuple[Decimal, ...] = ()
    moments: tuple[datetime, ...] = ()  # aware instants, or naive wall times in Europe/Berlin
    payloads: tuple[Any, ...] = ()  # JSON: tool results as the journal holds them


def reply_numbers(text: str) -> set[Decimal]:
    """Every number written in the reply: thousands separators dropped, 58.2 equal to 58.20."""
    found = set()
    for raw in _OLD_NUMBER.findall(text):
        try:
            found.add(Decimal(raw.replace(",", "")))
        except InvalidOperation:
            continue
    return found


def readings(token: str) -> set[Decimal]:
    """The values a written number may mean: 1,250.00 and 1.250,00 are 1250; 71,40 is 71.40 (or 7140)."""
    if any(sep in token for sep in ":/-"):
        return set()
    values = set()
    for candidate in (token.replace(",", ""), token.replace(".", "").replace(",", ".")):
        if candidate.count(".") <= 1:
            try:
                values.add(Decimal(candidate))
            except InvalidOperation:
                continue
    return values


def mentions(text: str, number: Decimal) -> bool:
    """The text states `number`, in English or German notation."""
    return number in reply_numbers(text) or any(number in readings(token) for token in _RUN.findall(text))


def _parts(token: str) -> list[Decimal]:
    return [Decimal(int(part)) for part in re.findall(r"\d+", token)]


def _composite(token: str) -> bool:
    """A date or time (2026-11-24, 09:00, 11/24, 24.11.2026) rather than one number."""
    return any(sep in token for sep in ":/-") or token.count(".") >= 2


def moment_values(moment: datetime) -> set[Decimal]:
    """The numbers a date-time may be written with, on its own clock and on Europe/Berlin's."""
    views = [moment] if moment.tzinfo is None else [moment, moment.astimezone(ZONE)]
    values: set[Decimal] = set()
    for view in views:
        hour12 = view.hour % 12 or 12
        values |= {Decimal(n) for n in (view.year, view.year % 100, view.month, view.day, view.hour, hour12)}
        values.add(Decimal(view.minute))
        for first, second in ((view.day, view.month), (view.hour, view.minute), (hour12, view.minute)):
            values |= {Decimal(f"{first}.{second}"), Decimal(f"{first}.{second:02d}")}  # 24.11., 9.30 Uhr
    return values


def chinese_number(text: str) -> int:
    """三十五 → 35, 一百二十 → 120, 两千 → 2000, 一万五千 → 15000."""
    total = section = digit = 0
    for char in text:
        if char in _CN_DIGITS:
            digit = _CN_DIGITS[char]
        elif char == "万":
            total += (section + digit) * 10000
            section = digit = 0
        else:
            section += (digit or 1) * _CN_UNITS[char]
            digit = 0
    return total + section + digit


def text_values(text: str) -> set[Decimal]:
    """Every number a source text holds: written numbers in all readings and parts, number words, and the parts
    of ISO date-times on Europe/Berlin's clock."""
    values: set[Decimal] = set()
    for token in _RUN.findall(text):
        values |= readings(token) | (set(_parts(token)) if _composite(token) else set())
    for stamp in _ISO_MOMENT.findall(text):
        try:
            values |= moment_values(datetime.fromisoformat(stamp.replace("Z", "+00:00")))
        except ValueError:
            continue
    values |= {Decimal(chinese_number(run)) for run in _CN_RUN.findall(text)}
    values |= {Decimal(_WORDS[word]) for word in _WORD.findall(text.lower()) if word in _WORDS}
    return values


def _payload_values(payload: Any) -> set[Decimal]:
    if isinstance(payload, dict):
        return set().union(*(_payload_values(value) for value in payload.values()))
    if isinstance(payload, list):
        return set().union(*(_payload_values(value) for value in payload))
    if isinstance(payload, str):
        return text_values(payload)
    if isinstance(payload, bool) or payload is None:
        return set()
    if isinstance(payload, int | float | Decimal):
        return {Decimal(str(payload))}
    return set()


def grounded_values(sources: Sources) -> set[Decimal]:
    # Zero is how a reply says that nothing matched ("0 € on clothes"), which an empty tool result states too.
    values: set[Decimal] = {Decimal(0), *sources.numbers}
    for text in sources.texts:
        values |= text_values(text)
    for moment in sources.moments:
        values |= moment_values(moment)
    for payload in sources.payloads:
        values |= _payload_values(payload)
    return values


def invented_numbers(reply: str, sources: Sources) -> list[str]:
    """The numbers of the reply (as written) that no source holds; list markers ("1. …") are not claims."""
    grounded = grounded_values(sources)
    invented = []
    for token in _RUN.findall(_LIST_MARKER.sub(r"\1", reply)):
        if readings(token) & grounded:
            continue
        if _composite(token) and all(part in grounded for part in _parts(token)):
            continue
        invented.append(token)
    return invented


def forbidden_numbers(reply: str, forbidden: Iterable[Decimal]) -> list[Decimal]:
    """The forbidden numbers the reply states."""
    return [number for number in forbidden if mentions(reply, number)]
