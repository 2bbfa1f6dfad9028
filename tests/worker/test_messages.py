"""handle_inbound's retry decision: only a transient failure runs the job again; anything else gets the member a
friendly reply on the first try. A database fault inside a tool is transient, and the retry stores the effect once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import pytest
from arq import Retry

from engine.pipeline import Engine
from tests.conftest import PostgresInfo
from tests.e2e.scripts import routed_model
from tests.fakes.openai_server import FakeOpenAI, Scripted
from tests.system import Family, System, accept_unqueued, make_family, make_settings, running_system
from worker.jobs import handle_inbound

EXPENSE = "I spent 7.20 euros on groceries"


@pytest.fixture
async def quick_tools(
    migrated: PostgresInfo, fake_llm: FakeOpenAI, redis_url: str, redis: object, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    """The system without a background worker (the tests run the job themselves), with a 1 s tool time limit."""
    fake_llm.reset()
    settings = make_settings(migrated, fake_llm.base_url, redis_url, tool_timeout_s=1.0)
    async with running_system(settings, fake_llm, admin_conn, worker=False) as running:
        yield running


async def _try(system: System, inbox_id: int, household_id: int, job_try: int) -> str:
    """One try of the job as arq runs it: its outcome, or "Retry" when it asked to run again."""
    ctx = {"deps": system.deps, "engine": Engine(system.deps), "job_try": job_try}
    try:
        return await handle_inbound(ctx, inbox_id, household_id)
    except Retry:
        return "Retry"


async def _message_state(system: System, inbox_id: int) -> tuple[str, int, list[str]]:
    row = await system.admin.fetchrow("SELECT status, attempts FROM inbox WHERE id = $1", inbox_id)
    replies = await system.admin.fetch("SELECT text FROM outbox WHERE inbox_id = $1", inbox_id)
    return row["status"], row["attempts"], [reply["text"] for reply in replies]


def _expense_calls(system: System) -> int:
    return sum(request.schema_name == "route_expense" for request in system.llm.requests)


async def test_an_answer_the_model_cannot_repair_is_answered_at_once_without_a_retry(system: System) -> None:
    family = await make_family(system.admin, "Unreadable", {"Anna": "Europe/Berlin"})
    system.llm.script(routed_model(expense=Scripted(content="not json")))
    row = await accept_unqueued(system.deps, family, "Anna", "unreadable-1", EXPENSE)

    assert await _try(system, row.id, family.household_id, job_try=1) == "failed"

    status, attempts, replies = await _message_state(system, row.id)
    assert (status, attempts, _expense_calls(system)) == ("failed", 1, 2)  # the answer and its one repair
    assert len(replies) == 1 and "try again" in replies[0]
    error = await system.admin.fetchval("SELECT error FROM inbox WHERE id = $1", row.id)
    assert error.startswith("analysis:")
    assert await _count_memories(system, family) == 0


@pytest.mark.parametrize(("status", "outcome"), [(400, "failed"), (422, "failed"), (429, "Retry"), (503, "Retry")])
async def test_the_model_endpoints_4xx_is_answered_at_once_and_its_429_and_5xx_retried(
    system: System, status: int, outcome: str
) -> None:
    family = await make_family(system.admin, f"Status {status}", {"Anna": "Europe/Berlin"})
    system.llm.script(lambda request: Scripted(content="unavailable", status=status))
    row = await accept_unqueued(system.deps, family, "Anna", f"status-{status}", EXPENSE)

    assert await _try(system, row.id, family.household_id, job_try=1) == outcome

    status_now, attempts, replies = await _message_state(system, row.id)
    if outcome == "Retry":
        assert (status_now, replies) == ("processing", [])  # waits for the next try
        await system.admin.execute("UPDATE inbox SET status = 'failed', error = 'test over' WHERE id = $1", row.id)
    else:
        assert (status_now, attempts) == ("failed", 1) and len(replies) == 1 and "try again" in replies[0]


# Each fault hits the store tool's INSERT while it waits behind a lock that a second session holds on `memories`:
# the server cancels the statement (as `statement_timeout` does: SQLSTATE 57014), the server drops the connection,
# or the database does not answer within the tool's time limit.
async def _cancel(locker: asyncpg.Connection, pid: int) -> None:
    assert await locker.fetchval("SELECT pg_cancel_backend($1)", pid)


async def _terminate(locker: asyncpg.Connection, pid: int) -> None:
    assert await locker.fetchval("SELECT pg_terminate_backend($1)", pid)


async def _outwait(locker: asyncpg.Connection, pid: int) -> None:
    """Nothing: the tool's 1 s time limit runs out while its statement waits."""


Fault = Callable[[asyncpg.Connection, int], Awaitable[None]]


async def _waiting_insert(watcher: asyncpg.Connection) -> int:
    """The backend whose INSERT into memories waits for the lock."""
    for _ in range(500):
        pid = await watcher.fetchval(
            "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO memories%'"
        )
        if pid is not None:
            return int(pid)
        await asyncio.sleep(0.01)
    raise AssertionError("the store tool never waited for the lock")


@pytest.mark.parametrize("fault", [_cancel, _terminate, _outwait], ids=["cancelled", "terminated", "timed-out"])
async def test_a_database_fault_inside_a_tool_retries_the_job_and_the_effect_happens_once(
    quick_tools: System, migrated: PostgresInfo, fault: Fault
) -> None:
    system = quick_tools
    family = await make_family(system.admin, f"Fault {fault.__name__}", {"Anna": "Europe/Berlin"})

    system.llm.script(routed_model())
    row = await accept_unqueued(system.deps, family, "Anna", f"fault-{fault.__name__}", EXPENSE)
    locker = await asyncpg.connect(migrated.admin_dsn)
    watcher = await asyncpg.connect(migrated.admin_dsn)
    try:
        lock = locker.transaction()
        await lock.start()
        await locker.execute("LOCK TABLE memories IN SHARE MODE")  # reads go on; writes wait
        first = asyncio.create_task(_try(system, row.id, family.household_id, job_try=1))
        await fault(locker, await _waiting_insert(watcher))
        first_outcome = await asyncio.wait_for(first, 10)
        await lock.rollback()
    finally:
        await locker.close()
        await watcher.close()

    assert first_outcome == "Retry"  # not a degraded "done" without the expense
    assert await _count_memories(system, family) == 0
    assert await _try(system, row.id, family.household_id, job_try=2) == "answered"
    status, attempts, replies = await _message_state(system, row.id)
    assert (status, attempts) == ("done", 2)
    assert len(replies) == 1 and "7.20 EUR" in replies[0]
    assert await _count_memories(system, family) == 1
    assert _expense_calls(system) == 1  # the retry replayed the journaled answer


async def _count_memories(system: System, family: Family) -> Any:
    return await system.admin.fetchval("SELECT count(*) FROM memories WHERE household_id = $1", family.household_id)
