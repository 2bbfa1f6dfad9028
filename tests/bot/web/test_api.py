"""GET /v1/messages/{id} shows a message's status and reply as of one moment, even while the message finishes."""

from __future__ import annotations

import asyncio
import json

import asyncpg

from engine.settings import Settings
from tests.conftest import PostgresInfo
from tests.fakes.openai_server import FakeOpenAI
from tests.system import accept_unqueued, eventually, make_family, running_system
from tools.storage import outbox


async def test_a_message_finishing_during_the_read_is_shown_before_or_after_never_half(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection, migrated: PostgresInfo
) -> None:
    """The finishing transaction (status done + the reply row, as the engine's record step commits them) holds a
    lock on the outbox, so the read waits for it on the outbox and no sooner: a read that took the inbox row in a
    statement of its own would see 'processing', then wait, then see the reply."""
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system:
        family = await make_family(admin_conn, "Atomic", {"Anna": "Europe/Berlin"})
        row = await accept_unqueued(system.deps, family, "Anna", "atomic-1", "hello")
        await admin_conn.execute("UPDATE inbox SET status = 'processing' WHERE id = $1", row.id)
        url = f"/v1/messages/{row.id}"
        before = await (await system.client.get(url, headers=family.auth("Anna"))).json()
        assert before["status"] == "processing" and "reply" not in before

        finisher = await asyncpg.connect(migrated.admin_dsn)
        await finisher.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
        try:
            await finisher.execute("BEGIN; LOCK TABLE outbox IN ACCESS EXCLUSIVE MODE")
            reading = asyncio.create_task(system.client.get(url, headers=family.auth("Anna")))
            await eventually(
                lambda: admin_conn.fetchval(
                    "SELECT count(*) FROM pg_locks WHERE relation = 'outbox'::regclass AND NOT granted"
                )
            )
            await finisher.execute("UPDATE inbox SET status = 'done', completed_at = now() WHERE id = $1", row.id)
            await outbox.add(
                finisher,
                household_id=family.household_id,
                user_id=family.user_ids["Anna"],
                channel="web",
                recipient=str(family.user_ids["Anna"]),
                text="Hello Anna!",
                inbox_id=row.id,
                payload={"outcome": "answered"},
            )
            await finisher.execute("COMMIT")
            during = await (await reading).json()
        finally:
            await finisher.close()

    assert (during["status"], during["reply"]) == ("done", "Hello Anna!")
