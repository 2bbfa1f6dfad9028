"""The worker's guarantees: the sweeper recovers lost jobs; delivery retries, and records permanent failures."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import pytest

from bot.channels import intake
from engine.errors import DeliveryError, StorageError
from engine.pipeline import Engine
from engine.settings import Settings
from tests.e2e.scripts import routed_model
from tests.fakes.openai_server import FakeOpenAI, Scripted
from tests.system import System, accept_unqueued, eventually, make_family, running_system
from tools.storage import outbox
from tools.storage.database import Database
from tools.storage.households import Principal
from tools.storage.outbox import OutboxRow
from worker import delivery, messages
from worker.jobs import deliver_outbound, handle_inbound, sweep


async def test_sweeper_leaves_an_admitted_message_whose_job_waits_alone(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn
) -> None:
    """An admitted message's job still waits in the queue after its lease ran out (a long queue): the sweep leaves
    it; once the job is lost, the sweep gives the message a job of its own."""
    family = await make_family(admin_conn, "Queued", {"Anna": "Europe/Berlin"})
    principal = Principal(family.user_ids["Anna"], family.household_id)
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system:
        row, _ = await intake.accept(
            system.deps, principal, channel="web", external_id="q-1", text="hello?", trace_id="t-q"
        )  # admitted, its job in the queue; no worker picks it up
        assert await admin_conn.fetchval("SELECT status FROM inbox WHERE id = $1", row.id) == "processing"
        await _age(system, row.id)
        job_key = f"arq:job:inbox:{row.id}"
        queued_job = await system.redis.get(job_key)
        await sweep({"deps": system.deps})
        assert await system.redis.get(job_key) == queued_job  # the job in the queue was not replaced
        assert f"inbox:{row.id}".encode() in await system.redis.zrange("arq:queue", 0, -1)
        assert not await system.redis.keys(f"arq:job:inbox:{row.id}:sweep*")
        await system.redis.flushdb()  # now the job is lost
        await _age(system, row.id)
        await sweep({"deps": system.deps})
        assert await system.redis.keys(f"arq:job:inbox:{row.id}:sweep*")
    # Leave nothing queued for later tests' sweepers.
    await admin_conn.execute("UPDATE inbox SET status = 'failed', error = 'test over' WHERE id = $1", row.id)


async def test_sweeper_runs_a_message_whose_job_was_lost(system: System) -> None:
    family = await make_family(system.admin, "Lost", {"Anna": "Europe/Berlin"})
    system.llm.script(routed_model(chat={"reply": "Found you."}))
    # Committed, but the enqueue never happened (Redis flushed, process died in between).
    row = await accept_unqueued(system.deps, family, "Anna", "lost-1", "how are you?")
    await system.admin.execute("UPDATE inbox SET updated_at = now() - interval '1 hour' WHERE id = $1", row.id)

    await sweep({"deps": system.deps})

    for _ in range(200):
        reply = await system.admin.fetchrow("SELECT text, status FROM outbox WHERE inbox_id = $1", row.id)
        if reply is not None and reply["status"] == "sent":
            break
        await asyncio.sleep(0.05)
    assert reply is not None and reply["text"] == "Found you." and reply["status"] == "sent"
    assert await system.admin.fetchval("SELECT status FROM inbox WHERE id = $1", row.id) == "done"


class FlakySender:
    def __init__(self, failures: list[DeliveryError]) -> None:
        self.failures = failures
        self.sent: list[str] = []

    async def send(self, row: OutboxRow) -> None:
        if self.failures:
            raise self.failures.pop(0)
        self.sent.append(row.text)


async def _reply_row(system: System, family_name: str) -> tuple[int, int]:
    family = await make_family(system.admin, family_name, {"Anna": "Europe/Berlin"})
    async with system.deps.db.household(family.household_id) as conn:
        outbox_id = await outbox.add(
            conn,
            household_id=family.household_id,
            user_id=family.user_ids["Anna"],
            channel="flaky",
            recipient="anna",
            text="Your reminder",
        )
    assert outbox_id is not None
    return outbox_id, family.household_id


async def test_delivery_retries_then_sends_once(system: System) -> None:
    outbox_id, household_id = await _reply_row(system, "Flaky")
    sender = FlakySender(
        [DeliveryError("timeout", transient=True), DeliveryError("429", transient=True, retry_after_s=1)]
    )
    ctx = {"deps": dataclasses.replace(system.deps, senders={"flaky": sender})}

    results = [await deliver_outbound(ctx, outbox_id, household_id) for _ in range(4)]

    assert results == ["retrying", "retrying", "sent", "nothing to deliver"]
    assert sender.sent == ["Your reminder"]
    row = await system.admin.fetchrow("SELECT status, attempts, last_error FROM outbox WHERE id = $1", outbox_id)
    assert (row["status"], row["attempts"], row["last_error"]) == ("sent", 3, "429")


async def test_permanent_delivery_failure_is_recorded_not_dropped(system: System) -> None:
    outbox_id, household_id = await _reply_row(system, "Blocked")
    sender = FlakySender([DeliveryError("bot was blocked by the user", transient=False)])
    ctx = {"deps": dataclasses.replace(system.deps, senders={"flaky": sender})}

    assert await deliver_outbound(ctx, outbox_id, household_id) == "failed"

    row = await system.admin.fetchrow("SELECT status, last_error, text FROM outbox WHERE id = $1", outbox_id)
    assert (row["status"], row["last_error"], row["text"]) == ("failed", "bot was blocked by the user", "Your reminder")


async def test_reply_on_a_channel_without_sender_fails_visibly(system: System) -> None:
    outbox_id, household_id = await _reply_row(system, "Nowhere")
    assert await deliver_outbound({"deps": system.deps}, outbox_id, household_id) == "failed"
    assert await system.admin.fetchval("SELECT last_error FROM outbox WHERE id = $1", outbox_id) == (
        "no sender for channel 'flaky'"
    )


class LostAfterSending:
    """A sender that, once the channel has the reply, makes the database unreachable for the next `outages`
    transactions (a connection lost between the send and its record)."""

    def __init__(self, db: Database, outages: int) -> None:
        self.db = db
        self.outages = outages
        self.sent: list[str] = []
        self.status_while_sending: list[str] = []

    async def send(self, row: OutboxRow) -> None:
        async with self.db.household(row.household_id) as conn:
            self.status_while_sending.append(await conn.fetchval("SELECT status FROM outbox WHERE id = $1", row.id))
        self.sent.append(row.text)
        self.db.failing = self.outages  # type: ignore[attr-defined]


@dataclasses.dataclass
class FlakyDatabase:
    """The real database, except that while `failing` is above zero each transaction fails as a lost connection."""

    real: Database
    failing: int = 0

    @contextlib.asynccontextmanager
    async def household(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        if self.failing > 0:
            self.failing -= 1
            raise StorageError("ConnectionDoesNotExistError: connection was closed", transient=True)
        async with self.real.household(*args, **kwargs) as conn:
            yield conn

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


async def test_a_reply_whose_record_meets_a_lost_connection_is_recorded_not_sent_again(system: System) -> None:
    outbox_id, household_id = await _reply_row(system, "Restarting")
    db = FlakyDatabase(system.deps.db)
    sender = LostAfterSending(db, outages=2)  # type: ignore[arg-type]
    deps = dataclasses.replace(system.deps, db=db, senders={"flaky": sender})

    assert await deliver_outbound({"deps": deps}, outbox_id, household_id) == "sent"
    await sweep({"deps": deps})
    assert await deliver_outbound({"deps": deps}, outbox_id, household_id) == "nothing to deliver"

    assert sender.sent == ["Your reminder"] and sender.status_while_sending == ["sending"]
    row = await system.admin.fetchrow("SELECT status, attempts FROM outbox WHERE id = $1", outbox_id)
    assert (row["status"], row["attempts"]) == ("sent", 1)


async def test_a_row_left_sending_is_sent_again_only_after_the_grace(system: System) -> None:
    """Its process died between the send and its record: another delivery and the sweep leave it alone for a
    while (the reply probably went out), then send it again rather than lose it."""
    outbox_id, household_id = await _reply_row(system, "Vanished")
    await system.admin.execute("UPDATE outbox SET status = 'sending', attempts = 1 WHERE id = $1", outbox_id)
    sender = FlakySender([])
    ctx = {"deps": dataclasses.replace(system.deps, senders={"flaky": sender})}

    assert await deliver_outbound(ctx, outbox_id, household_id) == "nothing to deliver"
    assert (outbox_id, household_id) not in await _due(system)
    await system.admin.execute(
        "UPDATE outbox SET next_attempt_at = now() - make_interval(secs => $2) WHERE id = $1",
        outbox_id,
        delivery.SENDING_STALE_S + 1,
    )
    assert (outbox_id, household_id) in await _due(system)
    assert await deliver_outbound(ctx, outbox_id, household_id) == "sent"
    assert sender.sent == ["Your reminder"]
    assert await system.admin.fetchval("SELECT attempts FROM outbox WHERE id = $1", outbox_id) == 2


async def _due(system: System) -> list[tuple[int, int]]:
    async with system.deps.db.unscoped() as conn:
        return await outbox.due(conn, 30.0, delivery.SENDING_STALE_S, limit=1000)


async def test_a_running_message_renews_its_lease_and_one_whose_worker_died_is_taken_over(system: System) -> None:
    """A job renews its message's lease while the engine works, so the sweep leaves it alone however long it runs;
    once the job is gone (its worker was killed), the lease runs out and the sweep enqueues the message again —
    not after arq's job timeout. Rows other tests (or households) left for the sweep do not count."""
    family = await make_family(system.admin, "Leased", {"Anna": "Europe/Berlin"})
    neighbour = await make_family(system.admin, "LeasedNeighbour", {"Ben": "Europe/Berlin"})
    leftover = await accept_unqueued(system.deps, neighbour, "Ben", "leased-leftover", "hello?")
    await _age(system, leftover.id)
    answering, released = asyncio.Event(), asyncio.Event()

    async def model(request: Any) -> Any:
        answering.set()
        await released.wait()
        return Scripted(content="late")

    system.llm.script(model)
    settings = system.deps.settings
    deps = dataclasses.replace(
        system.deps, settings=settings.model_copy(update={"worker": settings.worker.model_copy(update={"lease_s": 3})})
    )
    row = await accept_unqueued(system.deps, family, "Anna", "leased-1", "how are you?")
    job = asyncio.create_task(
        handle_inbound({"deps": deps, "engine": Engine(deps), "job_try": 1}, row.id, family.household_id)
    )
    await asyncio.wait_for(answering.wait(), 20)
    taken = await _leased_at(system, row.id)
    # Renewed by the running job. (Not aged first: the system's own worker sweeps too, and would take an aged row.)
    await eventually(lambda: _renewed_since(system, row.id, taken))
    await sweep({"deps": deps})
    assert not await system.redis.keys(f"arq:job:inbox:{row.id}:sweep*")

    job.cancel()  # the worker dies
    await asyncio.gather(job, return_exceptions=True)
    await _age(system, row.id)
    await sweep({"deps": deps})
    released.set()

    assert await system.redis.keys(f"arq:job:inbox:{row.id}:sweep*")
    await system.admin.execute(
        "UPDATE inbox SET status = 'failed', error = 'test over' WHERE id = any($1) AND status <> 'done'",
        [row.id, leftover.id],
    )


async def _age(system: System, inbox_id: int) -> None:
    await system.admin.execute("UPDATE inbox SET updated_at = now() - interval '1 hour' WHERE id = $1", inbox_id)


async def _leased_at(system: System, inbox_id: int) -> datetime:
    return await system.admin.fetchval("SELECT updated_at FROM inbox WHERE id = $1", inbox_id)


async def _renewed_since(system: System, inbox_id: int, taken: datetime) -> bool:
    return await _leased_at(system, inbox_id) > taken


async def test_after_redis_restarted_empty_the_sweep_returns_every_lost_message(
    system: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More lost messages than one page of the sweep: admitted messages whose jobs were lost, and households with
    messages waiting for their turn. One sweep enqueues them all."""
    monkeypatch.setattr(messages, "_SWEEP_PAGE", 4)
    system.llm.script(routed_model(chat={"reply": "Back."}))
    admitted = []
    for n in range(10):  # admitted when Redis went away: their jobs were lost with it
        family = await make_family(system.admin, f"Flushed{n}", {"Anna": "Europe/Berlin"})
        admitted.append(await accept_unqueued(system.deps, family, "Anna", f"flushed-{n}", "hello?"))
    admitted_ids = [row.id for row in admitted]
    await system.admin.execute(
        "UPDATE inbox SET status = 'processing', updated_at = now() - interval '1 hour' WHERE id = any($1)",
        admitted_ids,
    )
    waiting = []
    for n in range(6):  # accepted while Redis was down: waiting, no household gave them their turn
        family = await make_family(system.admin, f"Waiting{n}", {"Ben": "Europe/Berlin"})
        waiting.append(await accept_unqueued(system.deps, family, "Ben", f"waiting-{n}", "hello?"))
    waiting_ids = [row.id for row in waiting]
    await system.admin.execute(
        "UPDATE inbox SET updated_at = now() - interval '1 hour' WHERE id = any($1)", waiting_ids
    )

    assert (await sweep({"deps": system.deps}))["inbox"] >= len(admitted_ids) + len(waiting_ids)

    for inbox_id in admitted_ids:  # a job of its own, or already answered by the system's worker
        assert await system.redis.keys(f"arq:job:inbox:{inbox_id}:sweep*") or await system.admin.fetchval(
            "SELECT status = 'done' FROM inbox WHERE id = $1", inbox_id
        )
    ids = admitted_ids + waiting_ids
    await eventually(
        lambda: system.admin.fetchval("SELECT bool_and(status = 'done') FROM inbox WHERE id = any($1)", ids), 120
    )


async def test_an_admitted_message_whose_job_a_dead_worker_started_is_taken_over(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn
) -> None:
    """A worker took the job and was killed before it claimed the message: arq keeps that job to the dead worker
    until its timeout, so once the lease ran out the sweep gives the message a job of its own."""
    family = await make_family(admin_conn, "Taken", {"Anna": "Europe/Berlin"})
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system:
        row, _ = await intake.accept(
            system.deps, family.principal("Anna"), channel="web", external_id="t-1", text="hi", trace_id="t-t"
        )
        await _age(system, row.id)
        await sweep({"deps": system.deps})
        assert not await system.redis.keys(f"arq:job:inbox:{row.id}:sweep*")  # its job waits: left alone
        await system.redis.set(f"arq:in-progress:inbox:{row.id}", b"1")  # started by a worker, which died
        await _age(system, row.id)
        await sweep({"deps": system.deps})
        assert await system.redis.keys(f"arq:job:inbox:{row.id}:sweep*")
    await admin_conn.execute("UPDATE inbox SET status = 'failed', error = 'test over' WHERE id = $1", row.id)


async def test_a_reply_left_sending_is_sent_again_within_the_documented_window_ahead_of_waiting_messages(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn
) -> None:
    """The resend after a worker kill: due after SENDING_STALE_S, found by the next sweep, and its job is taken
    before the messages already waiting (it once waited 223 s behind a flood in the one FIFO queue)."""
    from pathlib import Path

    from worker.jobs import CRON_JOBS

    sweep_seconds = sorted(
        next(job.second for job in CRON_JOBS if job.name == "cron:sweep" and isinstance(job.second, set))
    )
    gap_s = max(b - a for a, b in zip(sweep_seconds, [*sweep_seconds[1:], sweep_seconds[0] + 60], strict=True))
    assert delivery.SENDING_STALE_S + gap_s <= delivery.RESEND_WINDOW_S
    assert f"{delivery.RESEND_WINDOW_S:g} s" in (Path(__file__).parents[2] / "docs" / "architecture.md").read_text()

    family = await make_family(admin_conn, "Resent", {"Anna": "Europe/Berlin"})
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system:
        waiting, _ = await intake.accept(
            system.deps, family.principal("Anna"), channel="web", external_id="r-1", text="hi", trace_id="t-r"
        )  # a message waiting in the queue
        async with system.deps.db.household(family.household_id) as conn:
            outbox_id = await outbox.add(
                conn, household_id=family.household_id, user_id=family.user_ids["Anna"], channel="flaky",
                recipient="anna", text="Your reply",
            )  # fmt: skip
        await admin_conn.execute(
            "UPDATE outbox SET status = 'sending', attempts = 1, next_attempt_at = now() - make_interval(secs => $2)"
            " WHERE id = $1",
            outbox_id,
            delivery.SENDING_STALE_S + 1,
        )
        assert await delivery.requeue_due(system.deps) >= 1
        queue = [job.decode() for job in await system.redis.zrange("arq:queue", 0, -1)]
        assert queue.index(f"outbox:{outbox_id}:1:sweep") < queue.index(f"inbox:{waiting.id}")
    await admin_conn.execute("UPDATE inbox SET status = 'failed', error = 'test over' WHERE id = $1", waiting.id)
    await admin_conn.execute("UPDATE outbox SET status = 'failed' WHERE id = $1", outbox_id)
