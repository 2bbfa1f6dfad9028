"""The web API's per-member rate limit: like the chat channels', over it a message is refused with 429 and a
Retry-After, nothing is stored, and other members are not slowed."""

from __future__ import annotations

import asyncpg

from engine.settings import Settings
from tests.fakes.openai_server import FakeOpenAI
from tests.system import make_family, running_system


async def test_a_member_posting_too_fast_is_told_when_to_retry(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    limited = settings.model_copy(update={"web": settings.web.model_copy(update={"messages_per_minute": 3})})
    async with running_system(limited, fake_llm, admin_conn, worker=False) as system:
        family = await make_family(admin_conn, "Fast writers", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
        statuses, retry_after = [], []
        for number in range(7):
            body = {"text": f"note {number}", "client_message_id": f"fast-{number}", "wait": False}
            response = await system.client.post("/v1/messages", json=body, headers=family.auth("Anna"))
            statuses.append(response.status)
            if response.status == 429:
                assert (await response.json())["error"]["code"] == "rate_limited"
                retry_after.append(int(response.headers["Retry-After"]))
        # A minute's window may turn during the loop: at most 3 pass in each of (at most) two windows.
        assert 3 <= statuses.count(202) <= 6 and statuses.count(429) == 7 - statuses.count(202)
        assert all(1 <= wait <= 60 for wait in retry_after)
        stored = await admin_conn.fetchval("SELECT count(*) FROM inbox WHERE household_id = $1", family.household_id)
        assert stored == statuses.count(202)
        other = await system.client.post("/v1/messages", json={"text": "hi", "wait": False}, headers=family.auth("Ben"))
        assert other.status == 202
        await admin_conn.execute(
            "UPDATE inbox SET status = 'failed', error = 'test over' WHERE household_id = $1 AND status = 'queued'",
            family.household_id,
        )
