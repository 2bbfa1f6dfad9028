"""The registry: schemas derived from types, validation errors the model can act on, JSON-ready results."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, cast

import pytest
from pydantic import BaseModel, ConfigDict

from tools.context import ToolContext
from tools.errors import ToolRetry
from tools.registry import Tool, ToolRegistry, tool

from . import REGISTRY, HashEmbedder

EXPECTED_TOOLS = [
    "store",
    "search",
    "aggregate",
    "update_memory_fields",
    "forget",
    "restore",
    "schedule_reminder",
    "list_reminders",
    "cancel_reminder",
    "snooze_reminder",
    "move_reminder",
    "complete_reminder",
    "set_quiet_hours",
    "add_event",
    "list_events",
    "move_event",
    "cancel_event",
    "remind_before_event",
    "forget_me",
    "add_list_items",
    "show_list",
    "update_list_item",
    "remove_list_item",
    "clear_done_items",
    "set_budget",
    "remove_budget",
    "budget_status",
    "render_chart",
    "undo",
]


def walk(node: Any) -> list[Any]:
    found = [node]
    if isinstance(node, dict):
        for value in node.values():
            found += walk(value)
    elif isinstance(node, list):
        for value in node:
            found += walk(value)
    return found


def property_names(schema: dict[str, Any]) -> set[str]:
    return {
        name
        for node in walk(schema)
        if isinstance(node, dict) and isinstance(node.get("properties"), dict)
        for name in node["properties"]
    }


def test_default_registry_lists_the_generic_tools() -> None:
    assert REGISTRY.names() == EXPECTED_TOOLS
    assert {REGISTRY.get(name).writes for name in ("store", "update_memory_fields", "forget", "restore")} == {True}
    assert {REGISTRY.get(name).writes for name in ("search", "aggregate", "list_reminders")} == {False}


@pytest.mark.parametrize("name", EXPECTED_TOOLS)
def test_no_tool_takes_who_is_asking(name: str) -> None:
    made = REGISTRY.get(name)
    assert len(made.description) > 40
    schema = made.args_model.model_json_schema()
    assert not property_names(schema) & {"household_id", "user_id", "author_id", "household", "user"}
    assert "household_id" not in json.dumps(schema) and "user_id" not in json.dumps(schema)


def test_unknown_tool_lists_the_known_ones() -> None:
    with pytest.raises(ToolRetry) as caught:
        REGISTRY.get("delete_everything")
    assert all(name in caught.value.message for name in EXPECTED_TOOLS)
    with pytest.raises(ToolRetry):
        REGISTRY.validate("delete_everything", "{}")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object, not list"),
        ('"store it"', "must be a JSON object, not str"),
        ('{"kind": "note"}', "content: Field required"),
        ('{"content": "x", "kind": "expense", "amount": "ten", "currency": "EUR", "tags": "a"}', "amount: "),
        ("[" * 5000 + "]" * 5000, "arguments"),
    ],
)
def test_validation_errors_name_the_fields(raw: str, expected: str) -> None:
    with pytest.raises(ToolRetry) as caught:
        REGISTRY.validate("store", raw)
    assert caught.value.tool == "store"
    assert expected in caught.value.message
    assert len(caught.value.message) < 1000


def test_several_errors_are_reported_together() -> None:
    with pytest.raises(ToolRetry) as caught:
        REGISTRY.validate("store", {"content": "", "kind": "gossip", "tags": "a", "extra": 1})
    message = caught.value.message
    assert all(f"{field}:" in message for field in ("content", "kind", "tags", "extra"))


def test_valid_arguments_become_the_model() -> None:
    args = REGISTRY.validate(
        "search",
        '{"query": "dentist", "filter": {"all": [{"field": "person", "op": "eq", "value": "Ben"}]}, "limit": 3}',
    )
    assert type(args).__name__ == "SearchArgs"
    # Dumps (e.g. for tool_use events and the journal) use the same keys the model wrote.
    assert args.model_dump(mode="json")["filter"] == {"all": [{"field": "person", "op": "eq", "value": "Ben"}]}
    assert REGISTRY.validate("search", {"query": "   "}).model_dump()["query"] is None  # blank = no semantic part
    with pytest.raises(ToolRetry, match="memory_ids: Field required"):
        REGISTRY.validate("forget", "  ")  # no arguments at all reads as {}


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    amount: Decimal
    note: str | None = None


class EchoResult(BaseModel):
    amount: Decimal
    when: datetime
    note: str | None = None


async def echo(ctx: ToolContext, args: EchoArgs) -> EchoResult:
    """Repeat the amount back (test tool)."""
    return EchoResult(amount=args.amount * 3, when=ctx.now)


async def ask_again(ctx: ToolContext, args: EchoArgs) -> EchoResult:
    """Raise a retry the way the filter compiler does (test tool)."""
    raise ToolRetry("filter", "the filter has 40 nodes")


def fake_context() -> ToolContext:
    return ToolContext(
        conn=cast(Any, None),
        household_id=1,
        user_id=1,
        timezone="UTC",
        now=datetime(2025, 1, 2, 3, 4, tzinfo=UTC),
        embedder=HashEmbedder(),
    )


async def test_run_returns_json_ready_data_with_exact_decimals() -> None:
    registry = ToolRegistry([tool(echo, writes=False)])
    result = await registry.run(fake_context(), "echo", registry.validate("echo", '{"amount": 0.1}'))
    assert result == {"amount": "0.3", "when": "2025-01-02T03:04:00Z"}
    assert json.loads(json.dumps(result)) == result
    assert await registry.run(fake_context(), "echo", {"amount": "1.10"}) == {
        "amount": "3.30",
        "when": "2025-01-02T03:04:00Z",
    }


async def test_retries_raised_inside_a_tool_carry_the_tool_name() -> None:
    registry = ToolRegistry([tool(ask_again, writes=False)])
    with pytest.raises(ToolRetry) as caught:
        await registry.run(fake_context(), "ask_again", registry.validate("ask_again", {"amount": 1}))
    assert caught.value.tool == "ask_again" and caught.value.message == "the filter has 40 nodes"


def test_tool_derives_name_description_and_model() -> None:
    made = tool(echo, writes=True)
    assert (made.name, made.args_model, made.writes) == ("echo", EchoArgs, True)
    assert made.description == "Repeat the amount back (test tool)."


class LeakyArgs(BaseModel):
    household_id: int


async def leaky(ctx: ToolContext, args: LeakyArgs) -> None:
    """Take the household from the model (never allowed)."""


async def undocumented(ctx: ToolContext, args: EchoArgs) -> None:
    pass


def test_tool_refuses_unsafe_or_undocumented_functions() -> None:
    with pytest.raises(TypeError, match="household_id"):
        tool(leaky, writes=False)
    with pytest.raises(TypeError, match="docstring"):
        tool(undocumented, writes=False)
    with pytest.raises(ValueError, match="two tools"):
        ToolRegistry([tool(echo, writes=False), tool(echo, writes=False)])
    assert isinstance(tool(echo, writes=False), Tool)
