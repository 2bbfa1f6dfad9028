"""Fair by household: a member and a household have a bounded number of messages in flight, another household's
message starts at once, and a finished message hands its slot to its household's oldest waiting one."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from engine.pipeline import Engine
from engine.settings import Settings
from tests.e2e.scripts import routed_model
from tests.fakes.openai_server import ChatRequest, FakeOpenAI
from tests.system import accept_unqueued, eventually, make_family, running_system
from worker.jobs import handle_inbound, sweep


async def test_a_flooding_household_holds_its_slots_only_and_hands_them_on_in_order(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    fair = settings.model_copy(
        update={"worker": settings.worker.model_copy(update={"member_in_flight": 1, "household_in_flight": 2})}
    )
    flooding = await make_family(
        admin_conn, "Flooding", {"Anna": "Europe/Berlin", "Alex": "Europe/Berlin", "Carl": "Europe/Berlin"}
    )
    quiet = await make_family(admin_conn, "Quiet", {"Bea": "Europe/Berlin"})
    released = asyncio.Event()
    started: list[str] = []

    async def model(request: ChatRequest) -> Any:
        if "slow" in request.last_user_text:
            started.append(request.last_user_text)
            await released.wait()
        return routed_model(chat={"reply": "Done."})(request)

    async with running_system(fair, fake_llm, admin_conn, worker=False) as system:
        system.llm.script(model)
        home = flooding.household_id
        anna_1 = await accept_unqueued(system.deps, flooding, "Anna", "fair-anna-1", "slow one")
        alex_1 = await accept_unqueued(system.deps, flooding, "Alex", "fair-alex-1", "slow two")
        anna_2 = await accept_unqueued(system.deps, flooding, "Anna", "fair-anna-2", "anna again")
        carl_1 = await accept_unqueued(system.deps, flooding, "Carl", "fair-carl-1", "carl here")
        bea_1 = await accept_unqueued(system.deps, quiet, "Bea", "fair-bea-1", "hello")
        ctx = {"deps": system.deps, "engine": Engine(system.deps), "job_try": 1}

        running = [
            asyncio.create_task(handle_inbound(ctx, anna_1.id, home)),
            asyncio.create_task(handle_inbound(ctx, alex_1.id, home)),
        ]

        async def both_started() -> bool:
            return len(started) == 2

        await eventually(both_started)
        assert await handle_inbound(ctx, anna_2.id, home) == "waiting"  # Anna has her one in flight
        assert await handle_inbound(ctx, carl_1.id, home) == "waiting"  # the household has its two
        assert await _status(system.admin, anna_2.id, carl_1.id) == ["queued", "queued"]
        assert await handle_inbound(ctx, bea_1.id, quiet.household_id) != "waiting"  # another household: at once
        assert await _status(system.admin, bea_1.id) == ["done"]
        assert len(started) == 2  # the waiting ones never reached the model

        released.set()
        await asyncio.gather(*running)
        # Each finished message handed its slot to the household's oldest waiting message, with a job of its own.
        assert await _status(system.admin, anna_2.id, carl_1.id) == ["processing", "processing"]
        for row in (anna_2, carl_1):
            assert await system.redis.exists(f"arq:job:inbox:{row.id}")
            assert await handle_inbound(ctx, row.id, home) != "waiting"
        assert await _status(system.admin, anna_1.id, alex_1.id, anna_2.id, carl_1.id) == ["done"] * 4
        assert await system.admin.fetchval(
            "SELECT count(*) FROM outbox WHERE inbox_id = any($1)", [anna_1.id, alex_1.id, anna_2.id, carl_1.id]
        ) == 4  # fmt: skip


async def test_a_waiting_message_whose_turn_was_lost_is_given_it_by_the_sweep(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    """The job that finished a message died before it handed on the slot: the sweep hands it on."""
    family = await make_family(admin_conn, "Handed", {"Anna": "Europe/Berlin"})
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system:
        first = await accept_unqueued(system.deps, family, "Anna", "handed-1", "one")
        second = await accept_unqueued(system.deps, family, "Anna", "handed-2", "two")
        await admin_conn.execute("UPDATE inbox SET status = 'processing' WHERE id = $1", first.id)
        ctx = {"deps": system.deps, "engine": Engine(system.deps), "job_try": 1}
        await system.redis.enqueue_job("handle_inbound", second.id, family.household_id, _job_id=f"inbox:{second.id}")
        await system.redis.delete("arq:queue", f"arq:job:inbox:{second.id}")  # as if a worker ran it ...
        assert await handle_inbound(ctx, second.id, family.household_id) == "waiting"
        await system.redis.set(f"arq:result:inbox:{second.id}", b"waiting")  # ... and kept its result
        await admin_conn.execute(
            "UPDATE inbox SET status = 'done', updated_at = now() - interval '1 hour' WHERE id = any($1)",
            [first.id],
        )  # finished by a job that died before handing on its slot
        await admin_conn.execute("UPDATE inbox SET updated_at = now() - interval '1 hour' WHERE id = $1", second.id)
        await sweep({"deps": system.deps})
        assert await _status(admin_conn, second.id) == ["processing"]
        assert await system.redis.exists(f"arq:job:inbox:{second.id}:turn")
    await admin_conn.execute("UPDATE inbox SET status = 'failed', error = 'test over' WHERE id = $1", second.id)


async def _status(admin: asyncpg.Connection, *ids: int) -> list[str]:
    rows = await admin.fetch("SELECT id, status FROM inbox WHERE id = any($1)", list(ids))
    by_id = {row["id"]: row["status"] for row in rows}
    return [by_id[inbox_id] for inbox_id in ids]


async def test_a_message_whose_own_job_still_waits_is_run_by_that_job_alone(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    """Its turn came before its job was taken (a job enqueued for it before it was admitted): no second job, so it
    is answered by one run."""
    from bot.channels import intake
    from tools.infra.queue import enqueue_message

    family = await make_family(admin_conn, "Once", {"Anna": "Europe/Berlin"})
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system:
        system.llm.script(routed_model(chat={"reply": "Once."}))
        first = await accept_unqueued(system.deps, family, "Anna", f"once-{family.household_id}-1", "one")
        await admin_conn.execute("UPDATE inbox SET status = 'processing' WHERE id = $1", first.id)
        second = await accept_unqueued(system.deps, family, "Anna", f"once-{family.household_id}-2", "two")
        assert await enqueue_message(system.redis, second.id, family.household_id)  # its job waits in the queue
        await admin_conn.execute("UPDATE inbox SET status = 'done' WHERE id = $1", first.id)

        assert await intake.next_turns(system.deps, family.household_id) == [second.id]
        assert await _status(admin_conn, second.id) == ["processing"]
        assert not await system.redis.exists(f"arq:job:inbox:{second.id}:turn")
        ctx = {"deps": system.deps, "engine": Engine(system.deps), "job_try": 1}
        assert await handle_inbound(ctx, second.id, family.household_id) == "answered"
        assert await _status(admin_conn, second.id) == ["done"]


async def test_a_flood_waits_in_the_inbox_so_another_households_job_is_next_whatever_its_size(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    """One household sends 40 messages, then another household one. Only the flood's admitted messages (its slots)
    have jobs; the rest wait in the inbox without one. So arq's queue, taken in its order, reaches the other
    household's job right after the flood's admitted ones — not after the flood's 40 jobs."""
    from bot.channels import intake

    fair = settings.model_copy(
        update={"worker": settings.worker.model_copy(update={"member_in_flight": 1, "household_in_flight": 3})}
    )
    members = ("Anna", "Ben", "Clara", "Dora", "Emil")
    flooding = await make_family(admin_conn, "Flood", dict.fromkeys(members, "Europe/Berlin"))
    other = await make_family(admin_conn, "Other", {"Olga": "Europe/Berlin"})
    async with running_system(fair, fake_llm, admin_conn, worker=False) as system:
        flood = [
            (await intake.accept(
                system.deps, flooding.principal(members[n % 5]), channel="web", external_id=f"flood-{n}",
                text=f"flood {n}", trace_id=f"t-flood-{n}",
            ))[0]
            for n in range(40)
        ]  # fmt: skip
        olga, _ = await intake.accept(
            system.deps, other.principal("Olga"), channel="web", external_id="other-1", text="hi", trace_id="t-o"
        )

        queue = [job.decode() for job in await system.redis.zrange("arq:queue", 0, -1)]  # arq takes them in this order
        assert queue == [f"inbox:{row.id}" for row in flood[:3]] + [f"inbox:{olga.id}"]
        assert await _status(system.admin, *(row.id for row in flood)) == ["processing"] * 3 + ["queued"] * 37
        assert await _status(system.admin, olga.id) == ["processing"]
    await admin_conn.execute(
        "UPDATE inbox SET status = 'failed', error = 'test over' WHERE household_id = any($1) AND status <> 'done'",
        [flooding.household_id, other.household_id],
    )


async def test_the_sweep_gives_a_turn_nobody_gave_once_its_message_has_waited(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    """A message just accepted is the intake's to admit (or the finishing message's): the sweep leaves it. One that
    has waited past the grace had its turn lost, and the sweep gives it."""
    family = await make_family(admin_conn, "Grace", {"Anna": "Europe/Berlin"})
    async with running_system(settings, fake_llm, admin_conn, worker=False) as system:
        row = await accept_unqueued(system.deps, family, "Anna", f"grace-{family.household_id}", "hi")
        await sweep({"deps": system.deps})
        assert await _status(admin_conn, row.id) == ["queued"]
        assert not await system.redis.exists(f"arq:job:inbox:{row.id}")
        await admin_conn.execute("UPDATE inbox SET updated_at = now() - interval '1 hour' WHERE id = $1", row.id)
        await sweep({"deps": system.deps})
        assert await _status(admin_conn, row.id) == ["processing"]
        assert await system.redis.exists(f"arq:job:inbox:{row.id}")
    await admin_conn.execute("UPDATE inbox SET status = 'failed', error = 'test over' WHERE id = $1", row.id)
