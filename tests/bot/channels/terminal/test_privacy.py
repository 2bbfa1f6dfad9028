"""The privacy and roles matrix (`tests/privacy_matrix.py`) on the command line: `faa chat --member …`, whose typed
lines go through inbox, queue, worker and engine to the same tools. Each member asks to change each row of every
kind they meet (memories, events, reminders, list items; their own, another member's, the household's; private and
shared); what changes is what the matrix says, and no reply carries the hints the tools write for the model."""

from __future__ import annotations

import re

import asyncpg
import pytest

from bot.channels.terminal.chat import chat
from tests.conftest import PostgresInfo
from tests.e2e.scripts import analysis, is_analysis, member_message
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, Scripted
from tests.privacy_matrix import ROLES, Row, changed, expected, family_of_three, rows_for, tool_write
from tests.system import make_settings, running_system
from worker.main import background_worker


def _model(rows: dict[str, Row]) -> object:
    """`change the <kind> <owner>-<visibility> to …` plans the matrix's write of that row (`tool_write`: a memory's
    content, a list item's quantity, an event or reminder cancelled), as a competent model would (with the id from
    the context it was shown)."""

    def model(request: ChatRequest) -> Scripted:
        assert is_analysis(request)
        label, _, marker = member_message(request).removeprefix("change the ").partition(" to ")
        tool, args = tool_write(rows[label], marker)
        return analysis("update", plan=[{"tool": tool, "args": args}], reply=f"Changed to {marker}.")

    return model


@pytest.mark.parametrize("actor", list(ROLES))
async def test_faa_chat_changes_what_the_member_may_change(
    own_database: PostgresInfo, fake_llm: FakeOpenAI, redis_url: str, redis: object, actor: str
) -> None:
    settings = make_settings(own_database, fake_llm.base_url, redis_url, max_seconds=20)
    admin = await asyncpg.connect(own_database.admin_dsn)
    try:
        family = await family_of_three(admin, "Terminal")
        async with running_system(settings, fake_llm, admin, worker=False) as system:
            rows = {f"{row.kind} {row.owner}-{row.visibility}": row for row in await rows_for(system, family, actor)}
        fake_llm.reset()
        fake_llm.script(_model(rows))
        typed = iter([f"change the {label} to changed by {actor}" for label in rows])

        async def keyboard(prompt: str) -> str | None:
            return next(typed, None)

        async with background_worker(settings):
            await chat(settings, own_database.admin_dsn, actor, None, read_line=keyboard)
        for label, row in rows.items():
            done = await changed(admin, row, f"changed by {actor}")
            assert done == (expected(ROLES[actor], row) == "changed"), label
        replies = [
            r["reply_text"]
            for r in await admin.fetch(
                "SELECT reply_text FROM interactions WHERE household_id = $1 ORDER BY id", family.household_id
            )
        ]
        assert len(replies) == len(rows)
        assert not any(re.search(r"search|show_list|list_reminders|_id\b", reply) for reply in replies), replies
    finally:
        await admin.close()
