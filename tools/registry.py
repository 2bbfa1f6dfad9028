"""The tool registry: typed async functions, the validation of their arguments, and their runs.

A tool is `async def name(ctx: ToolContext, args: NameArgs) -> NameResult`. Its arguments are `NameArgs`, its
description the docstring. The engine's capabilities build every call from the model's answer and the message's
grounding; the arguments are validated like a webhook body all the same. Nothing about who is asking (household,
member) is ever an argument: that comes from the context, so no call can reach anyone else's data.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, get_type_hints

import asyncpg
import structlog
from pydantic import BaseModel, ValidationError

from tools.aggregate import aggregate
from tools.budgets import budget_status, remove_budget, set_budget
from tools.charts import render_chart
from tools.context import ToolContext
from tools.errors import ToolError, ToolRetry
from tools.events import add_event, cancel_event, list_events, move_event, remind_before_event
from tools.forgetting import forget_me
from tools.lists import add_list_items, clear_done_items, remove_list_item, show_list, update_list_item
from tools.memories import forget, restore, search, store, update_memory_fields
from tools.quiet_hours import set_quiet_hours
from tools.reminders import (
    cancel_reminder,
    complete_reminder,
    list_reminders,
    move_reminder,
    schedule_reminder,
    snooze_reminder,
)
from tools.storage.database import is_transient, storable_text, transient_error
from tools.undo import undo

log = structlog.get_logger()

_FORBIDDEN_ARGS = frozenset({"household_id", "user_id"})
# What a tool's own mistake raises, as opposed to the database or the network: ValueError includes UnicodeError and
# asyncpg's DataError (an argument PostgreSQL cannot take), RuntimeError includes RecursionError.
_BUGS = (ArithmeticError, AssertionError, AttributeError, LookupError, RuntimeError, TypeError, ValueError)
_MAX_REPORTED_ERRORS = 6
_MAX_NESTING = 32  # JSON levels in one call's arguments; the deepest a tool takes (a filter tree) needs about 10


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    args_model: type[BaseModel]
    func: Callable[[ToolContext, Any], Awaitable[Any]]
    writes: bool

    def __post_init__(self) -> None:
        leaked = _FORBIDDEN_ARGS & _property_names(self.args_model.model_json_schema())
        if leaked:
            raise TypeError(f"tool {self.name} must not take {sorted(leaked)}: they come from the ToolContext")


def tool(func: Callable[[ToolContext, Any], Awaitable[Any]], *, writes: bool) -> Tool:
    """A Tool from a typed async function: name from the function, description from its docstring, arguments
    model from the annotation of its second parameter."""
    parameters = list(inspect.signature(func).parameters)
    if len(parameters) != 2:
        raise TypeError(f"{func.__name__} must take (ctx, args)")
    args_model = get_type_hints(func)[parameters[1]]
    if not (inspect.isclass(args_model) and issubclass(args_model, BaseModel)):
        raise TypeError(f"{func.__name__}: the args parameter must be annotated with a pydantic model")
    description = inspect.getdoc(func)
    if not description:
        raise TypeError(f"{func.__name__} needs a docstring: it is the tool's description")
    return Tool(func.__name__, description, args_model, func, writes)


class ToolRegistry:
    """An explicit, ordered set of tools."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            if item.name in self._tools:
                raise ValueError(f"two tools are named {item.name}")
            self._tools[item.name] = item

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise ToolRetry(name, f"there is no tool named {name!r}; use one of: {', '.join(self._tools)}") from None

    def validate(self, name: str, raw_args: str | dict[str, Any]) -> BaseModel:
        """The arguments as the tool's model; ToolRetry (for the model to fix) when they do not fit."""
        item = self.get(name)
        data: Any = raw_args
        if isinstance(raw_args, str):
            try:
                data = json.loads(raw_args) if raw_args.strip() else {}
            except (ValueError, RecursionError) as exc:  # ValueError: bad JSON, or an integer of 5000 digits
                raise ToolRetry(name, f"the arguments are not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise ToolRetry(name, f"the arguments must be a JSON object, not {type(data).__name__}")
        try:
            return item.args_model.model_validate(_plain_text(name, data, 0))
        except ValidationError as exc:
            raise ToolRetry(name, "invalid arguments: " + describe_errors(exc)) from None
        except _BUGS as exc:  # a validator that crashes instead of refusing: a bug, but the model can still retry
            log.error("tool.validation_crashed", tool=name, error=type(exc).__name__, exc_info=True)
            raise ToolRetry(name, f"invalid arguments ({type(exc).__name__}); check their types and sizes") from None

    async def run(self, ctx: ToolContext, name: str, args: BaseModel | dict[str, Any]) -> dict[str, Any]:
        """Run a tool on validated arguments; the result as JSON-ready data (Decimals as exact strings)."""
        item = self.get(name)
        if not isinstance(args, item.args_model):
            args = self.validate(name, args if isinstance(args, dict) else args.model_dump(by_alias=True))
        try:
            result = await item.func(ctx, args)
        except ToolRetry as exc:
            if exc.tool != name:  # e.g. raised by the filter compiler, or a tool another tool called
                exc.tool = name
                exc.args = (f"{name}: {exc.message}",)
            raise
        except asyncpg.PostgresError as exc:
            if is_transient(exc):  # a statement cancelled or timed out, a lost connection: the job retries
                raise transient_error(exc) from exc
            raise ToolError(name, f"database error {type(exc).__name__}") from exc
        except _BUGS as exc:
            # Arguments that passed validation and still crash the tool are a bug (the property tests look for
            # these): the operator gets the traceback, the member an answer that says this step failed.
            log.error("tool.crashed", tool=name, error=type(exc).__name__, exc_info=True)
            raise ToolError(name, f"internal error ({type(exc).__name__})") from exc
        if isinstance(result, BaseModel):
            dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            return dumped
        if isinstance(result, dict):
            plain: dict[str, Any] = json.loads(json.dumps(result, default=str))
            return plain
        raise ToolError(name, f"returned {type(result).__name__}, not a model or dict")


def _plain_text(tool: str, value: Any, depth: int) -> Any:
    """The arguments with every string storable (no NUL, no lone surrogate: see `storable_text`), whatever field
    it is in; ToolRetry when they nest deeper than any tool's arguments do."""
    if depth > _MAX_NESTING:
        raise ToolRetry(tool, f"the arguments nest more than {_MAX_NESTING} levels deep")
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {_plain_text(tool, key, depth): _plain_text(tool, item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain_text(tool, item, depth + 1) for item in value]
    return value


def describe_errors(exc: ValidationError) -> str:
    """Pydantic's errors as a short line the model can act on: `field.path: problem; …`."""
    parts = []
    for error in exc.errors(include_url=False)[:_MAX_REPORTED_ERRORS]:
        path: list[str] = []
        for part in error["loc"]:
            if not path or path[-1] != str(part):  # tagged unions repeat the tag: all.all.0 → all.0
                path.append(str(part))
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{'.'.join(path) or '(arguments)'}: {message}")
    extra = exc.error_count() - _MAX_REPORTED_ERRORS
    return "; ".join(parts) + (f"; and {extra} more" if extra > 0 else "")


def _property_names(schema: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                found |= set(value)
            found |= _property_names(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= _property_names(value)
    return found


def default_registry() -> ToolRegistry:
    """Every generic tool, in the order the prompt lists them."""
    return ToolRegistry(
        [
            tool(store, writes=True),
            tool(search, writes=False),
            tool(aggregate, writes=False),
            tool(update_memory_fields, writes=True),
            tool(forget, writes=True),
            tool(restore, writes=True),
            tool(schedule_reminder, writes=True),
            tool(list_reminders, writes=False),
            tool(cancel_reminder, writes=True),
            tool(snooze_reminder, writes=True),
            tool(move_reminder, writes=True),
            tool(complete_reminder, writes=True),
            tool(set_quiet_hours, writes=True),
            tool(add_event, writes=True),
            tool(list_events, writes=False),
            tool(move_event, writes=True),
            tool(cancel_event, writes=True),
            tool(remind_before_event, writes=True),
            tool(forget_me, writes=True),
            tool(add_list_items, writes=True),
            tool(show_list, writes=False),
            tool(update_list_item, writes=True),
            tool(remove_list_item, writes=True),
            tool(clear_done_items, writes=True),
            tool(set_budget, writes=True),
            tool(remove_budget, writes=True),
            tool(budget_status, writes=False),
            tool(render_chart, writes=False),
            tool(undo, writes=True),
        ]
    )
