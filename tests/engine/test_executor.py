import pytest

from engine.analysis import PlannedCall
from engine.errors import PlanningError
from engine.executor import waves


def step(step_id: str, *depends_on: str) -> PlannedCall:
    return PlannedCall(id=step_id, tool="search", args={}, depends_on=list(depends_on))


def test_independent_steps_share_a_wave_and_dependants_follow() -> None:
    grouped = waves([step("a"), step("b"), step("c", "a", "b"), step("d", "c"), step("e")])
    assert [[s.id for s in group] for group in grouped] == [["a", "b", "e"], ["c"], ["d"]]


@pytest.mark.parametrize(
    ("plan", "problem"),
    [
        ([step("a", "b"), step("b", "a")], "cycle"),
        ([step("a", "zzz")], "unknown steps"),
        ([step("a"), step("a")], "unique"),
    ],
)
def test_unusable_plans_are_refused(plan: list[PlannedCall], problem: str) -> None:
    with pytest.raises(PlanningError, match=problem):
        waves(plan)
