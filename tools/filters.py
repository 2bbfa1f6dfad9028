"""The filter language the model writes: a small typed tree compiled to parameterised SQL over `memories m`.

A condition is `{"field", "op", "value"}`; nodes combine as `{"all": [...]}`, `{"any": [...]}`, `{"not": {...}}`.
Fields and operators come from fixed allow-lists, the SQL for a field comes only from `_FIELDS`, and every value
is bound as a `$n` parameter. Dates and times without an offset are in the asking member's timezone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Literal, Protocol, Union, get_args
from zoneinfo import ZoneInfo

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, Tag, WithJsonSchema, model_validator
from typing_extensions import TypeAliasType

from tools.errors import ToolRetry
from tools.infra.periods import PERIODS, localize, parse_moment, period_range

MAX_DEPTH = 4
MAX_NODES = 32
MAX_LIST = 50
MAX_STRING = 200
MAX_AMOUNT = Decimal("1e12")

Kind = Literal["expense", "income", "health", "plan", "fact", "note", "shopping", "contact"]
FieldName = Literal[
    "content",
    "kind",
    "category",
    "person",
    "merchant",
    "tags",
    "currency",
    "amount",
    "occurred_at",
    "created_at",
    "author",
    "visibility",
]
Op = Literal["eq", "ne", "lt", "lte", "gt", "gte", "in", "contains", "exists", "between", "period"]
KINDS: tuple[str, ...] = get_args(Kind)

ValueKind = Literal["text", "label", "name", "tags", "currency", "amount", "time", "author", "visibility"]


@dataclass(frozen=True)
class _Field:
    sql: str  # a fixed expression over `m`; never built from input
    kind: ValueKind
    ops: tuple[str, ...]


_LABEL_OPS = ("eq", "ne", "in", "exists")
_NAME_OPS = ("eq", "ne", "in", "contains", "exists")
_TIME_OPS = ("eq", "lt", "lte", "gt", "gte", "between", "period")
# kind, category, person and merchant are the JSONB keys as generated columns (0008_memory_keys.sql: under RLS only
# leakproof conditions reach an index, and `->>` is not one); person_key and merchant_key are lowercased.
_FIELDS: dict[str, _Field] = {
    "content": _Field("m.content", "text", ("contains", "eq", "ne")),
    "kind": _Field("m.kind", "label", _LABEL_OPS),
    "category": _Field("m.category", "label", (*_LABEL_OPS, "contains")),
    "person": _Field("m.person_key", "name", _NAME_OPS),
    "merchant": _Field("m.merchant_key", "name", _NAME_OPS),
    "tags": _Field("(m.ai_understanding -> 'tags')", "tags", ("contains", "in", "exists")),
    "currency": _Field("m.currency", "currency", _LABEL_OPS),
    "amount": _Field("m.amount", "amount", ("eq", "ne", "lt", "lte", "gt", "gte", "between", "in", "exists")),
    "occurred_at": _Field("m.occurred_at", "time", _TIME_OPS),
    "created_at": _Field("m.created_at", "time", _TIME_OPS),
    "author": _Field("m.author_id", "author", _LABEL_OPS),
    "visibility": _Field("m.visibility", "visibility", ("eq", "ne")),
}
_COMPARISONS = {"eq": "=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}


def filter_help() -> str:
    """One paragraph for the model: the tree's shape, each field's operators, the value rules."""
    fields = "; ".join(f"{name}: {'|'.join(spec.ops)}" for name, spec in _FIELDS.items())
    return (
        'Filter tree. Condition: {"field", "op", "value"}; combine with {"all": [..]}, {"any": [..]}, {"not": {..}}. '
        f"Fields and ops: {fields}. person/merchant/author (a member's name) match case-insensitively; "
        "'in' takes a list, 'between' [low, high] inclusive, 'exists' true/false, 'period' one of "
        f"{', '.join(PERIODS)}. Dates/times are ISO 8601, in the member's timezone unless they carry an offset; "
        f"a bare date covers the whole day. At most depth {MAX_DEPTH}, {MAX_NODES} nodes, {MAX_LIST} list items."
    )


_VALUE_SCHEMA = {"type": ["string", "number", "boolean", "array", "null"], "items": {"type": ["string", "number"]}}


def _plain_value(value: Any) -> Any:
    """A JSON scalar, or a short list of strings and numbers, with bounded strings."""
    items = value if isinstance(value, list) else [value]
    if isinstance(value, list) and len(value) > MAX_LIST:
        raise ValueError(f"at most {MAX_LIST} items in a list")
    for item in items:
        if isinstance(item, str) and len(item) > MAX_STRING:
            raise ValueError(f"strings are at most {MAX_STRING} characters")
        allowed = (str, int, float) if isinstance(value, list) else (str, int, float, bool, type(None))
        if not isinstance(item, allowed) or (isinstance(value, list) and isinstance(item, bool)):
            raise ValueError("value is a string, a number, true/false, or a list of strings and numbers")
    return value


class Condition(BaseModel):
    """One test on one field of a memory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: FieldName
    op: Op
    value: Annotated[Any, AfterValidator(_plain_value), WithJsonSchema(_VALUE_SCHEMA)] = None

    @model_validator(mode="after")
    def _typed_value(self) -> Condition:
        typed_value(self)  # raises ValueError, which pydantic reports at this node
        return self


class AllOf(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, serialize_by_alias=True)
    all_: list[FilterNode] = Field(alias="all", min_length=1, max_length=MAX_NODES)


class AnyOf(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, serialize_by_alias=True)
    any_: list[FilterNode] = Field(alias="any", min_length=1, max_length=MAX_NODES)


class NotOf(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, serialize_by_alias=True)
    not_: FilterNode = Field(alias="not")


def _node_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        return next((key for key in ("all", "any", "not") if key in value), "condition")
    tags: dict[type, str] = {Condition: "condition", AllOf: "all", AnyOf: "any", NotOf: "not"}
    return tags.get(type(value))


FilterNode = TypeAliasType(
    "FilterNode",
    Annotated[
        Union[  # noqa: UP007 -- Tag annotations need the explicit Union form
            Annotated[Condition, Tag("condition")],
            Annotated[AllOf, Tag("all")],
            Annotated[AnyOf, Tag("any")],
            Annotated[NotOf, Tag("not")],
        ],
        Discriminator(
            _node_tag,
            custom_error_type="filter_node",
            custom_error_message=(
                'a filter node is an object: {"field","op","value"}, {"all":[..]}, {"any":[..]} or {"not":{..}}'
            ),
        ),
    ],
)
for _model in (AllOf, AnyOf, NotOf):
    _model.model_rebuild()


def _children(node: Any) -> list[Any]:
    if isinstance(node, AllOf):
        return list(node.all_)
    if isinstance(node, AnyOf):
        return list(node.any_)
    if isinstance(node, NotOf):
        return [node.not_]
    return []


def limit_problem(node: Any) -> str | None:
    """Why this tree is too big for one query, or None."""
    count, deepest, stack = 0, 0, [(node, 1)]
    while stack:
        current, depth = stack.pop()
        count, deepest = count + 1, max(deepest, depth)
        stack.extend((child, depth + 1) for child in _children(current))
    if deepest > MAX_DEPTH:
        return f"the filter is nested {deepest} levels deep; at most {MAX_DEPTH} are allowed"
    if count > MAX_NODES:
        return f"the filter has {count} nodes; at most {MAX_NODES} are allowed"
    return None


def _check_limits(node: Any) -> Any:
    problem = limit_problem(node)
    if problem:
        raise ValueError(problem)
    return node


Filter = Annotated[FilterNode, AfterValidator(_check_limits)]
"""A whole filter tree, size-checked: use this type for a tool's `filter` argument."""


def _scalar(field: str, kind: ValueKind, value: Any) -> Any:
    if kind == "amount":
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(f"{field} needs a number, got {value!r}")
        try:
            number = Decimal(str(value).strip())
        except InvalidOperation:
            raise ValueError(f"{field} needs a number, got {value!r}") from None
        if not number.is_finite() or abs(number) >= MAX_AMOUNT:
            raise ValueError(f"{field} must be a finite number below {MAX_AMOUNT:,.0f}")
        return number
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{field} needs a non-empty string, got {value!r}")
    value = value.strip()
    if kind == "time":
        return parse_moment(value)
    if kind in ("label", "tags", "visibility"):
        value = value.lower()
    if field == "kind" and value not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")
    if kind == "visibility" and value not in ("household", "private"):
        raise ValueError("visibility is 'household' or 'private'")
    if kind == "currency":
        if len(value) != 3 or not value.isascii() or not value.isalpha():
            raise ValueError(f"currency needs a 3-letter ISO 4217 code, got {value!r}")
        value = value.upper()
    return value


def typed_value(cond: Condition) -> Any:
    """The condition's value checked and converted for its field and operator (ValueError when it does not fit)."""
    spec = _FIELDS[cond.field]
    field, op, value = cond.field, cond.op, cond.value
    if op not in spec.ops:
        raise ValueError(f"op '{op}' does not apply to field '{field}'; use one of {', '.join(spec.ops)}")
    if op == "exists":
        if value is not None and not isinstance(value, bool):
            raise ValueError("op 'exists' takes true or false")
        return value is not False
    if op == "period":
        if value not in PERIODS:
            raise ValueError(f"op 'period' takes one of {', '.join(PERIODS)}")
        return value
    if op in ("in", "between"):
        if not isinstance(value, list) or not value:
            raise ValueError(f"op '{op}' takes a list")
        if op == "between" and len(value) != 2:
            raise ValueError("op 'between' takes [low, high]")
        items = [_scalar(field, spec.kind, item) for item in value]
        if op == "between" and spec.kind == "amount" and items[0] > items[1]:
            raise ValueError("op 'between' takes [low, high] with low <= high")
        return items
    if isinstance(value, list) or value is None:
        raise ValueError(f"op '{op}' takes a single value")
    return _scalar(field, spec.kind, value)


class FilterScope(Protocol):
    """What compiling needs from the tool context: the household and the member's clock."""

    @property
    def household_id(self) -> int: ...
    @property
    def timezone(self) -> str: ...
    @property
    def now(self) -> datetime: ...


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@dataclass
class _Compiler:
    params: list[Any]
    scope: FilterScope

    def bind(self, value: Any, cast: str) -> str:
        self.params.append(value)
        return f"${len(self.params)}::{cast}"

    def node(self, node: Any) -> str:
        if isinstance(node, Condition):
            return self.condition(node)
        if isinstance(node, NotOf):
            return f"(({self.node(node.not_)}) IS NOT TRUE)"  # a missing field counts as "not matching"
        joiner = " AND " if isinstance(node, AllOf) else " OR "
        return "(" + joiner.join(self.node(child) for child in _children(node)) + ")"

    def condition(self, cond: Condition) -> str:
        spec = _FIELDS[cond.field]
        try:
            value = typed_value(cond)
        except ValueError as exc:
            raise ToolRetry("filter", str(exc)) from None
        if cond.op == "exists":
            present = self.present(spec)
            return present if value else f"(NOT {present})"
        handler: Callable[[_Field, str, Any], str] = getattr(self, f"_{spec.kind}")
        return handler(spec, cond.op, value)

    def present(self, spec: _Field) -> str:
        if spec.kind == "tags":
            return f"coalesce(jsonb_typeof({spec.sql}) = 'array' AND {spec.sql} <> '[]'::jsonb, false)"
        return f"({spec.sql} IS NOT NULL)"

    def _equality(self, sql: str, op: str, value: Any, cast: str) -> str:
        if op == "in":
            return f"({sql} = ANY({self.bind(value, cast + '[]')}))"
        if op == "ne":
            return f"({sql} IS DISTINCT FROM {self.bind(value, cast)})"
        return f"({sql} {_COMPARISONS[op]} {self.bind(value, cast)})"

    def _contains(self, sql: str, value: str) -> str:
        return f"({sql} ILIKE {self.bind(_like_pattern(value), 'text')} ESCAPE '\\')"

    def _text(self, spec: _Field, op: str, value: Any) -> str:
        return self._contains(spec.sql, value) if op == "contains" else self._equality(spec.sql, op, value, "text")

    _label = _text
    _visibility = _text

    def _currency(self, spec: _Field, op: str, value: Any) -> str:
        return self._equality(f"{spec.sql}::text", op, value, "text")

    def _name(self, spec: _Field, op: str, value: Any) -> str:
        if op == "contains":
            return self._contains(spec.sql, value)
        lowered = [v.lower() for v in value] if op == "in" else value.lower()
        return self._equality(spec.sql, op, lowered, "text")

    def _tags(self, spec: _Field, op: str, value: Any) -> str:
        if op == "in":
            return f"coalesce({spec.sql} ?| {self.bind(value, 'text[]')}, false)"
        # @> on the whole document uses the GIN jsonb_path_ops index.
        return f"(m.ai_understanding @> jsonb_build_object('tags', jsonb_build_array({self.bind(value, 'text')})))"

    def _amount(self, spec: _Field, op: str, value: Any) -> str:
        if op == "between":
            low, high = (self.bind(v, "numeric") for v in value)
            return f"({spec.sql} BETWEEN {low} AND {high})"
        return self._equality(spec.sql, op, value, "numeric")

    def _author(self, spec: _Field, op: str, value: Any) -> str:
        names = [v.lower() for v in value] if op == "in" else [value.lower()]
        members = (
            f"SELECT fu.id FROM users fu WHERE fu.household_id = {self.bind(self.scope.household_id, 'bigint')} "
            f"AND lower(fu.name) = ANY({self.bind(names, 'text[]')})"
        )
        if op == "ne":
            return f"({spec.sql} IS NULL OR {spec.sql} NOT IN ({members}))"
        return f"({spec.sql} IN ({members}))"

    def _time(self, spec: _Field, op: str, value: Any) -> str:
        tz = ZoneInfo(self.scope.timezone)
        if op == "period":
            start, end = period_range(value, self.scope.now, self.scope.timezone)
            return f"({spec.sql} >= {self.bind(start, 'timestamptz')} AND {spec.sql} < {self.bind(end, 'timestamptz')})"
        if op == "between":
            low, high = value
            if self._lower(low, tz)[1] > self._upper(high, tz)[1]:
                raise ToolRetry("filter", f"between on {spec.sql.removeprefix('m.')} takes [earlier, later]")
            return f"({self._bound(spec, *self._lower(low, tz))} AND {self._bound(spec, *self._upper(high, tz))})"
        if op == "eq" and not isinstance(value, datetime):
            return f"({self._bound(spec, *self._lower(value, tz))} AND {self._bound(spec, *self._upper(value, tz))})"
        if isinstance(value, datetime):
            return self._bound(spec, _COMPARISONS[op], localize(value, tz))
        # A bare date stands for the whole day: "after the 3rd" starts on the 4th, "until the 3rd" includes it.
        start, end = localize(value, tz), localize(value + timedelta(days=1), tz)
        bounds = {"lt": ("<", start), "lte": ("<", end), "gt": (">=", end), "gte": (">=", start)}
        return self._bound(spec, *bounds[op])

    @staticmethod
    def _lower(moment: date | datetime, tz: ZoneInfo) -> tuple[str, datetime]:
        return ">=", localize(moment, tz)

    @staticmethod
    def _upper(moment: date | datetime, tz: ZoneInfo) -> tuple[str, datetime]:
        if isinstance(moment, datetime):
            return "<=", localize(moment, tz)
        return "<", localize(moment + timedelta(days=1), tz)

    def _bound(self, spec: _Field, operator: str, instant: datetime) -> str:
        return f"({spec.sql} {operator} {self.bind(instant, 'timestamptz')})"


def compile_filter(node: Any, params: list[Any], scope: FilterScope) -> str:
    """SQL for `node` over `memories m`, appending its values to `params` as $n; ToolRetry when it is unusable."""
    problem = limit_problem(node)
    if problem:
        raise ToolRetry("filter", problem)
    return _Compiler(params, scope).node(node)
