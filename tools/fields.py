"""The typed values the memory tools take: each coerces what models commonly write (currency signs, spaced
slugs, bare dates) and refuses the rest with a message the model can act on."""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    PlainSerializer,
    PlainValidator,
    StringConstraints,
    WithJsonSchema,
)

from tools.infra.periods import check_year, parse_moment

BIGINT_MAX = 2**63 - 1
DETAIL_NUMBER_MAX = 10**15  # a detail number is a count, a size or a code; past this it is surely a mistake


def _slug(value: Any) -> Any:
    return "-".join(value.strip().lower().split()) if isinstance(value, str) else value


def _check_slug(value: str) -> str:
    if not re.fullmatch(r"\w[\w-]*", value):
        raise ValueError(f"{value!r} is not a slug; use lowercase words joined by '-', e.g. 'groceries'")
    return value


# Symbols and words models write instead of the code; only the unambiguous ones (¥ is CNY here, as the prompt says).
_CURRENCY_SIGNS = {"€": "EUR", "$": "USD", "US$": "USD", "£": "GBP", "¥": "CNY", "元": "CNY", "块": "CNY", "RMB": "CNY"}


def _currency(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    code = value.strip().upper()
    code = _CURRENCY_SIGNS.get(code, code)
    if not re.fullmatch(r"[A-Z]{3}", code):
        raise ValueError(f"{value!r} is not a 3-letter ISO 4217 currency code such as EUR or USD")
    return code


def blank_is_none(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


def _moment(value: Any) -> date | datetime:
    if isinstance(value, (date, datetime)):
        return check_year(value)
    if not isinstance(value, str):
        raise ValueError("expected an ISO 8601 date or date-time string")
    return parse_moment(value)


Content = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000)]
Slug = Annotated[str, BeforeValidator(_slug), StringConstraints(max_length=40), AfterValidator(_check_slug)]
Amount = Annotated[
    Decimal,
    Field(max_digits=14, decimal_places=2),
    WithJsonSchema({"type": ["number", "string"], "description": "exact decimal, at most 2 places, e.g. 35.50"}),
]
Currency = Annotated[str, BeforeValidator(_currency)]
Moment = Annotated[
    date | datetime,
    PlainValidator(_moment),
    # Without it pydantic's union serializer warns on every JSON dump of a valid value.
    PlainSerializer(lambda value: value.isoformat(), return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "description": "ISO 8601 date or date-time; no offset = member's timezone"}),
]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
Tag = Annotated[str, StringConstraints(strip_whitespace=True, to_lower=True, min_length=1, max_length=40)]
Tags = Annotated[list[Tag], Field(max_length=10)]


def _detail_value(value: Any) -> str | int | float | bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        if len(value) > 500:
            raise ValueError("a detail text is at most 500 characters")
        return value
    if isinstance(value, (int, float)):
        if abs(value) > DETAIL_NUMBER_MAX or not math.isfinite(value):  # in this order: a huge int has no float
            raise ValueError(f"a detail number is finite and at most {DETAIL_NUMBER_MAX:.0e}; give big ones as text")
        return value
    raise ValueError("a detail value is a short text, a number, true/false or null")


def _row_id(value: int) -> int:
    if value > BIGINT_MAX:
        raise ValueError("no row has an id that large; take ids from tool results")
    return value


# The bounds that only refuse nonsense are checked, not shown: every schema is in every prompt.
DetailValue = Annotated[
    str | int | float | bool | None,
    PlainValidator(_detail_value),
    WithJsonSchema(
        {
            "anyOf": [
                {"maxLength": 500, "type": "string"},
                {"type": "integer"},
                {"type": "number"},
                {"type": "boolean"},
                {"type": "null"},
            ]
        }
    ),
]
Details = Annotated[dict[Annotated[str, Field(min_length=1, max_length=40)], DetailValue], Field(max_length=20)]
Visibility = Literal["household", "private"]
RowId = Annotated[int, Field(gt=0), AfterValidator(_row_id)]
"""The id of a stored row (memory_id, reminder_id): a positive bigint."""
MemoryId = RowId
