"""The number guard: every number in a reply must come from somewhere — the member's message, the grounding or a
tool result. A number the model made up (a total no tool computed, another family's spending) is caught here.

Numbers are compared as values, so 58.2 matches 58.20 and 1,250 matches 1250; dates and times count by their
parts (2026-11-24 09:00 grounds 2026, 11, 24, 9 and 0).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

# 1,250.50 · 1.250,50 · 58.20 · 7 — a separator joins digits only when a group of three follows it.
_NUMBER = re.compile(r"(?<![\d.,])\d{1,3}(?:[,.]\d{3})+(?:[.,]\d+)?(?![\d])|\d+(?:[.,]\d+)?")
_LIST_MARKER = re.compile(r"^\s*\d{1,2}[.)]\s", re.MULTILINE)


def numbers_in(text: str) -> set[Decimal]:
    """The values of the numbers written in `text`."""
    found: set[Decimal] = set()
    for raw in _NUMBER.findall(text):
        found |= _readings(raw)
    return found


def _readings(raw: str) -> set[Decimal]:
    """What a written number may mean: 1,250 is 1250, 71,40 is 71.40 and 1.5 is 1.5. A single separator before
    three digits (1.250) may be either, so both readings count."""
    groups = re.split(r"[,.]", raw)
    readings = []
    if len(groups) == 1:
        readings.append(raw)
    else:
        if all(len(group) == 3 for group in groups[1:]):
            readings.append("".join(groups))  # thousands separators only
        if len(groups[-1]) != 3 or len(groups) == 2:
            readings.append("".join(groups[:-1]) + "." + groups[-1])  # the last separator is the decimal point
    values = set()
    for reading in readings:
        try:
            values.add(Decimal(reading).normalize())
        except InvalidOperation:
            continue
    return values


def numbers_of(data: Any) -> set[Decimal]:
    """Every number inside JSON-like data (tool results): numeric values and numbers written in strings."""
    if isinstance(data, bool) or data is None:
        return set()
    if isinstance(data, (int, float, Decimal)):
        return numbers_in(str(data))
    if isinstance(data, str):
        return numbers_in(data)
    if isinstance(data, dict):
        return set().union(*(numbers_of(value) for value in data.values())) if data else set()
    if isinstance(data, (list, tuple)):
        return set().union(*(numbers_of(value) for value in data)) if data else set()
    return numbers_in(json.dumps(data, default=str))


def invented(reply: str, sources: Iterable[Any]) -> list[str]:
    """The numbers written in `reply` that no source holds (list markers like "1. " aside), as written."""
    allowed: set[Decimal] = set()
    for source in sources:
        allowed |= numbers_of(source)
    text = _LIST_MARKER.sub(" ", reply)
    return [raw for raw in _NUMBER.findall(text) if not (_readings(raw) & allowed)]
