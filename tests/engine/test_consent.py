"""The consent gate's rules, without a model: what always waits for a yes, and what a gate holds."""

from __future__ import annotations

from datetime import UTC, datetime

from engine.analysis import PlannedCall
from engine.consent import Gate, Which, must_ask, planned
from engine.grounding import ground
from tools.registry import default_registry

WRITES = frozenset(name for name in default_registry().names() if default_registry().get(name).writes)
NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def step(step_id: str, tool: str, depends_on: tuple[str, ...] = (), **args: object) -> PlannedCall:
    return PlannedCall(id=step_id, tool=tool, args=args, depends_on=list(depends_on))


def gate(text: str) -> Gate:
    return Gate(text, ground(text, NOW, "Europe/Berlin", ["Anna"]), WRITES)


def test_forgetting_the_member_or_in_bulk_always_waits_for_a_yes() -> None:
    me = step("s1", "forget_me")
    two = step("s1", "forget", memory_ids=[1, 2])
    one = step("s1", "forget", memory_ids=[1])
    assert must_ask([me], "forget everything about me") == [me]
    assert must_ask([two], "forget the two wifi notes") == [two]
    assert must_ask([one], "forget everything") == [one]  # however little the household holds
    assert must_ask([one], "vergiss alles") == [one]
    assert must_ask([one], "全部删除") == [one]
    assert must_ask([one], "forget the wifi note") == []


def test_a_gate_holds_what_needs_a_yes_and_what_depends_on_it_and_lets_the_rest_run() -> None:
    checking = gate("what is on my list?")
    plan = [
        step("s1", "show_list"),
        step("s2", "forget", memory_ids=[4]),
        step("s3", "restore", ("s2",), memory_ids=[4]),
        step("s4", "search", query="wifi"),
    ]

    runnable = checking.split(plan)
    again = checking.split([step("s1", "forget_me")])

    assert [s.id for s in runnable] == ["s1", "s4"] and again == []
    assert [(s.id, s.tool, s.depends_on) for s in checking.held] == [
        ("h1", "forget", []),
        ("h2", "restore", ["h1"]),
        ("h3", "forget_me", []),
    ]


def test_a_gate_lets_a_write_the_member_asked_for_run() -> None:
    recording = gate("Note: the wifi password is tulip42")
    store = step("v1", "store", content="the wifi password is tulip42", kind="note")
    assert recording.split([store]) == [store] and recording.held == []


def test_a_gate_that_knows_alike_rows_holds_a_change_of_one_row_until_the_member_picks() -> None:
    text = "forget the groceries expense"
    which = Which("Which one do you mean?", {"groceries at Lidl (35.50 EUR)": 4, "groceries at Rewe (22.70 EUR)": 5})
    picking = Gate(text, ground(text, NOW, "Europe/Berlin", ["Anna"]), WRITES, which)
    store = step("v1", "store", content="tomatoes", kind="note")

    assert picking.split([store, step("v2", "forget", memory_ids=[4]), step("v3", "forget", memory_ids=[4, 5])]) == [
        store
    ]
    assert [s.tool for s in picking.held] == ["forget", "forget"] and picking.needs_yes  # two rows: a yes
    assert which.pointing([step("s1", "update_memory_fields", memory_id=4, amount="30")]) != []


def test_a_native_call_becomes_a_plan_step_unless_its_arguments_are_no_object() -> None:
    assert planned("call_1", "forget_me", "{}") == PlannedCall(id="call_1", tool="forget_me", args={})
    assert planned("call_2", "forget", '{"memory_ids": [1]') is None
    assert planned("call_3", "forget", "[1, 2]") is None
    assert planned("call_" + "x" * 40, "store", {"content": "x"}) is not None
