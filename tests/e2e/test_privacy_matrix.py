"""The privacy and roles matrix (`tests/privacy_matrix.py`) on the model's path: the tools through the registry, as
the engine calls them, for each member — what their listings show and what their writes do. The other paths are
tested against the same matrix: the web app's forms and JSON (`tests/bot/web/pages/test_privacy.py`), Telegram's
tick buttons (`tests/bot/channels/telegram/test_privacy.py`), the command line's `faa chat`
(`tests/bot/channels/terminal/test_privacy.py`) and `faa member` (`tests/bot/ops/test_members.py`)."""

from __future__ import annotations

import pytest

from tests.privacy_matrix import (
    KINDS,
    REGISTRY,
    ROLES,
    Outcome,
    as_member,
    changed,
    expected,
    family_of_three,
    rows_for,
    tool_write,
)
from tests.system import Family, System
from tools.errors import NotPermitted, RowNotFound


async def _seen(system: System, family: Family, actor: str) -> dict[str, set[int]]:
    """What the actor's listings show of each kind."""
    async with as_member(system, family, actor) as ctx:
        memories = (await REGISTRY.run(ctx, "search", {"limit": 50}))["memories"]
        events = (await REGISTRY.run(ctx, "list_events", {"days": 7}))["events"]
        reminders = (await REGISTRY.run(ctx, "list_reminders", {"include_finished": True}))["reminders"]
        lists = (await REGISTRY.run(ctx, "show_list", {"include_done": True}))["lists"]
    return {
        "memory": {m["memory_id"] for m in memories},
        "event": {e["event_id"] for e in events},
        "reminder": {r["reminder_id"] for r in reminders},
        "list_item": {i["item_id"] for view in lists for i in view["items"]},
    }


@pytest.mark.parametrize("actor", list(ROLES))
async def test_the_tools_through_the_registry(system: System, actor: str) -> None:
    family = await family_of_three(system.admin, f"Matrix tools {actor}")
    rows = await rows_for(system, family, actor)
    seen = await _seen(system, family, actor)
    for kind in KINDS:
        visible = {row.id for row in rows if row.kind == kind and row.visible}
        hidden = {row.id for row in rows if row.kind == kind and not row.visible}
        assert hidden.isdisjoint(seen[kind]), kind
        if kind != "reminder":  # list_reminders lists the reminders for the member, not another member's own
            assert visible <= seen[kind], kind

    outcomes: dict[str, Outcome] = {}
    for row in rows:
        marker = f"changed by {actor}"
        tool, args = tool_write(row, marker)
        try:
            async with as_member(system, family, actor) as ctx:
                await REGISTRY.run(ctx, tool, REGISTRY.validate(tool, args))
            outcomes[row.label] = "changed"
        except NotPermitted:
            outcomes[row.label] = "refused"
        except RowNotFound:
            outcomes[row.label] = "not_found"
        assert await changed(system.admin, row, marker) == (outcomes[row.label] == "changed"), row.label
    assert outcomes == {row.label: expected(ROLES[actor], row) for row in rows}
