"""The privacy and roles matrix (`tests/privacy_matrix.py`) on the command line: `faa chat --member …`, whose typed
lines go through inbox, queue, worker and engine to the same tools. Each member asks to forget each note they meet
(their own, another member's, the household's; private and shared); what is forgotten is what the matrix says, and
another member's private note is neither shown to the model nor named in a reply."""

from __future__ import annotations

import asyncpg
import pytest

from bot.channels.terminal.chat import chat
from tests.conftest import PostgresInfo
from tests.e2e.scripts import routed_model
from tests.fakes.openai_server import FakeOpenAI
from tests.privacy_matrix import ROLES, expected, family_of_three, rows_for
from tests.system import make_settings, running_system
from worker.main import background_worker


@pytest.mark.parametrize("actor", list(ROLES))
async def test_faa_chat_forgets_what_the_member_may_change(
    own_database: PostgresInfo, fake_llm: FakeOpenAI, redis_url: str, redis: object, actor: str
) -> None:
    """`forget the note <owner>-<visibility>` through the terminal: the model is offered only the notes the member
    sees, and the tool refuses what the member may not change."""
    settings = make_settings(own_database, fake_llm.base_url, redis_url, max_seconds=20)
    admin = await asyncpg.connect(own_database.admin_dsn)
    try:
        family = await family_of_three(admin, "Terminal")
        async with running_system(settings, fake_llm, admin, worker=False) as system:
            rows = {f"{row.owner}-{row.visibility}": row for row in await rows_for(system, family, actor, ("memory",))}
        fake_llm.reset()
        fake_llm.script(routed_model())
        typed = iter([f"forget the note {label}" for label in rows])

        async def keyboard(prompt: str) -> str | None:
            return next(typed, None)

        async with background_worker(settings):
            await chat(settings, own_database.admin_dsn, actor, None, read_line=keyboard)
        shown = " ".join(str(m["content"]) for r in fake_llm.requests for m in r.messages)
        replies = await admin.fetch("SELECT reply_text FROM interactions WHERE household_id = $1", family.household_id)
        shown += " ".join(r["reply_text"] for r in replies)
        for label, row in rows.items():
            gone = await admin.fetchval("SELECT deleted_at IS NOT NULL FROM memories WHERE id = $1", row.id)
            assert gone == (expected(ROLES[actor], row) == "changed"), label
            assert row.visible or f"note {label}" not in shown, label  # another's private note is never shown
        assert len(replies) == len(rows)
    finally:
        await admin.close()
