"""The consent rule, without a model: what always waits for a yes."""

from __future__ import annotations

from engine.analysis import PlannedCall
from engine.consent import must_ask


def step(step_id: str, tool: str, **args: object) -> PlannedCall:
    return PlannedCall(id=step_id, tool=tool, args=args)


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
