"""`faa member rename|role|remove`: the operator manages a household's members with its owner's rights, through
the same rules as the household page (`tools.members`): the owner stays the owner and is never removed, removing
needs --yes, and a removed member's private rows go while everything others wrote stays."""

from __future__ import annotations

import asyncpg
import pytest

from tests.bot.ops.conftest import Faa
from tests.conftest import PostgresInfo
from tests.fakes.openai_server import FakeOpenAI
from tests.privacy_matrix import KINDS, ROLES, family_of_three, rows_for
from tests.system import make_settings, running_system

_TABLES = {"memory": "memories", "event": "events", "reminder": "reminders", "list_item": "list_items"}


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["rename", "Mia", "Mila"], 0),
        (["role", "Mia", "adult"], 0),
        (["role", "Sam", "child"], 2),  # the owner stays the owner
        (["remove", "Sam", "--yes"], 2),  # and is never removed
        (["remove", "Mia"], 2),  # without --yes nothing happens
        (["rename", "Nobody", "X"], 2),
        (["rename", "Mia", "Alex"], 2),  # names are unique in a household
    ],
)
async def test_members_are_managed_with_the_owners_rights(
    faa: Faa, admin: asyncpg.Connection, argv: list[str], status: int
) -> None:
    assert await faa("migrate") == 0
    family = await family_of_three(admin, "Managed")
    assert await faa("member", *argv, "--household", str(family.household_id)) == status
    roles = dict(await admin.fetch("SELECT name, role FROM users WHERE household_id = $1", family.household_id))
    if status == 0 and argv[0] == "rename":
        assert roles == {"Sam": "owner", "Alex": "adult", "Mila": "child"}
    elif status == 0:
        assert roles == {**ROLES, "Mia": "adult"}
    else:
        assert roles == ROLES


async def test_a_removed_member_leaves_what_others_wrote(
    faa: Faa,
    admin: asyncpg.Connection,
    environment: PostgresInfo,
    fake_llm: FakeOpenAI,
    redis_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert await faa("migrate") == 0
    family = await family_of_three(admin, "Removed")
    settings = make_settings(environment, fake_llm.base_url, redis_url)
    async with running_system(settings, fake_llm, admin, worker=False) as system:
        rows = await rows_for(system, family, "Mia", kinds=KINDS)
    capsys.readouterr()
    assert await faa("member", "remove", "Mia", "--household", str(family.household_id), "--yes") == 0
    assert "removed" in capsys.readouterr().out
    for row in rows:
        left = await admin.fetchval(f"SELECT count(*) FROM {_TABLES[row.kind]} WHERE id = $1", row.id)
        # Hers and private go, and so do the reminders she set for herself alone: they reach nobody now.
        gone = row.owner == "own" and (row.visibility == "private" or row.kind == "reminder")
        assert left == (0 if gone else 1), row.label
    forgotten = await admin.fetchrow("SELECT name, forgotten_at FROM users WHERE id = $1", family.user_ids["Mia"])
    assert forgotten["name"] == "former member" and forgotten["forgotten_at"] is not None
