"""Bad input gets a clear error, and nothing accepted is lost."""

from __future__ import annotations

import asyncio
import dataclasses
import io

import pytest
from arq.connections import ArqRedis

from bot.channels import intake
from tests.e2e.scripts import routed_model
from tests.fakes.openai_server import ChatRequest, Scripted
from tests.system import System, eventually, make_family
from tools.storage import households
from tools.storage.database import Connection
from tools.storage.households import Principal


async def test_unknown_or_missing_token_is_401(system: System) -> None:
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"}):
        response = await system.client.post("/v1/messages", json={"text": "hi"}, headers=headers)
        assert response.status == 401
        assert (await response.json())["error"]["code"] == "unauthorized"


async def test_requests_that_miss_the_token_cache_together_share_one_lookup(
    system: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    family = await make_family(system.admin, "Cold", {"Anna": "Europe/Berlin"})
    looked_up: list[str] = []
    resolve = households.resolve_token

    async def counted(conn: Connection, token: str) -> Principal | None:
        looked_up.append(token)
        return await resolve(conn, token)

    monkeypatch.setattr(households, "resolve_token", counted)
    known = [system.client.get("/v1/messages/999999999", headers=family.auth("Anna")) for _ in range(10)]
    unknown = [system.client.get("/v1/messages/999999999", headers={"Authorization": "Bearer nope"}) for _ in range(3)]
    responses = await asyncio.gather(*known, *unknown)

    assert [r.status for r in responses] == [404] * 10 + [401] * 3  # the member's token worked for all ten
    assert sorted(looked_up) == sorted([family.tokens["Anna"], "nope"])


@pytest.mark.parametrize("message_id", ["99999999999999999999", str(2**63), "0", "-5", "-99999999999999999999"])
async def test_a_message_id_past_bigint_is_404_not_500(system: System, message_id: str) -> None:
    family = await make_family(system.admin, "Huge", {"Anna": "Europe/Berlin"})
    response = await system.client.get(f"/v1/messages/{message_id}", headers=family.auth("Anna"))
    assert response.status == 404
    assert (await response.json())["error"]["code"] == "not_found"


@pytest.mark.parametrize("since", ["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00"])
async def test_notifications_since_the_end_of_the_calendar_is_400_not_500(system: System, since: str) -> None:
    family = await make_family(system.admin, "Edge", {"Anna": "Europe/Berlin"})
    response = await system.client.get("/v1/notifications", params={"since": since}, headers=family.auth("Anna"))
    assert response.status == 400


async def test_malformed_bodies_are_400_with_the_problem(system: System) -> None:
    family = await make_family(system.admin, "Bad", {"Anna": "Europe/Berlin"})
    for body in (b"{not json", b"[]", b'{"text": ""}', b'{"text": "hi", "extra": 1}', b'{"text": 5}'):
        response = await system.client.post("/v1/messages", data=body, headers=family.auth("Anna"))
        assert response.status == 400, body
        assert (await response.json())["error"]["code"] == "invalid_request"
    assert await system.admin.fetchval("SELECT count(*) FROM inbox WHERE household_id = $1", family.household_id) == 0


async def test_oversize_body_is_413_and_stores_nothing(system: System) -> None:
    family = await make_family(system.admin, "Big", {"Anna": "Europe/Berlin"})
    response = await system.client.post(
        "/v1/messages", data=io.BytesIO(b'{"text": "' + b"x" * (1024 * 1024 + 10) + b'"}'), headers=family.auth("Anna")
    )
    assert response.status == 413
    assert await system.admin.fetchval("SELECT count(*) FROM inbox WHERE household_id = $1", family.household_id) == 0


async def test_no_wait_gives_202_and_the_message_can_be_polled(system: System) -> None:
    family = await make_family(system.admin, "Poll", {"Anna": "Europe/Berlin"})
    system.llm.script(routed_model(chat={"reply": "Hello Anna!"}))
    response = await system.client.post(
        "/v1/messages", json={"text": "how are you?", "wait": False}, headers=family.auth("Anna")
    )
    assert response.status == 202
    location = response.headers["Location"]
    for _ in range(400):
        status = await (await system.client.get(location, headers=family.auth("Anna"))).json()
        if status.get("reply"):
            break
        await asyncio.sleep(0.05)
    assert status["reply"] == "Hello Anna!"
    assert status["status"] == "done"


async def test_health_and_openapi(system: System) -> None:
    health = await system.client.get("/health")
    assert health.status == 200
    assert await health.json() == {"status": "ok", "postgres": "ok", "redis": "ok"}
    spec = await (await system.client.get("/openapi.json")).json()
    assert spec["openapi"].startswith("3.")
    assert {"/v1/messages", "/v1/messages/stream", "/v1/messages/{message_id}", "/health"} <= set(spec["paths"])


async def test_accepted_message_survives_a_redis_outage(system: System) -> None:
    family = await make_family(system.admin, "NoRedis", {"Anna": "Europe/Berlin"})
    gone = ArqRedis(host="127.0.0.1", port=1)  # Redis went away after the inbox row was committed
    deps = dataclasses.replace(system.deps, redis=gone)
    principal = Principal(family.user_ids["Anna"], family.household_id)

    row, created = await intake.accept(
        deps, principal, channel="web", external_id="down-1", text="hello", trace_id="t-down"
    )

    await gone.aclose()
    assert created
    assert await system.admin.fetchval("SELECT status FROM inbox WHERE id = $1", row.id) == "queued"
    # Leave nothing queued for later tests' sweepers.
    await system.admin.execute("UPDATE inbox SET status = 'failed', error = 'test over' WHERE id = $1", row.id)


async def test_a_waited_answer_is_the_message_as_polled(system: System) -> None:
    """The waiting POST answers from the published reply; GET reads the stored rows: both show the same."""
    family = await make_family(system.admin, "Same", {"Anna": "Europe/Berlin"})
    system.llm.script(lambda request: Scripted(content="not json"))
    clarifying = await system.client.post(
        "/v1/messages", json={"text": "Ben spent some money at the pharmacy"}, headers=family.auth("Anna")
    )
    failed = await system.client.post("/v1/messages", json={"text": "how are you?"}, headers=family.auth("Anna"))
    for response, outcome, status in ((clarifying, "clarifying", "done"), (failed, "failed", "failed")):
        waited = await response.json()
        assert (response.status, waited["outcome"], waited["status"]) == (200, outcome, status)
        polled = await system.client.get(f"/v1/messages/{waited['message_id']}", headers=family.auth("Anna"))
        assert {**await polled.json(), "duplicate": False} == waited
    assert waited["reply"] and (await clarifying.json())["reply"]


async def test_a_member_reads_only_their_own_messages(system: System) -> None:
    family = await make_family(system.admin, "Own", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    system.llm.script(routed_model(chat={"reply": "Hi Anna."}))
    sent = await (
        await system.client.post("/v1/messages", json={"text": "how are you?"}, headers=family.auth("Anna"))
    ).json()

    mine = await system.client.get(f"/v1/messages/{sent['message_id']}", headers=family.auth("Anna"))
    theirs = await system.client.get(f"/v1/messages/{sent['message_id']}", headers=family.auth("Ben"))

    assert (mine.status, (await mine.json())["reply"]) == (200, "Hi Anna.")
    assert theirs.status == 404  # the same household, but not Ben's message


async def test_members_waiting_for_their_replies_hold_back_no_one_elses_job(system: System) -> None:
    """A message sent without waiting is answered while other members wait for their replies or read them as a
    stream."""
    family = await make_family(system.admin, "Patient", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    release = asyncio.Event()

    async def held(request: ChatRequest) -> Scripted:
        await release.wait()
        return routed_model(chat={"reply": "Here."})(request)

    system.llm.script(held)
    waiting = asyncio.create_task(
        system.client.post("/v1/messages", json={"text": "how are you?"}, headers=family.auth("Anna"))
    )
    streaming = asyncio.create_task(
        system.client.post("/v1/messages/stream", json={"text": "how are you?"}, headers=family.auth("Ben"))
    )

    async def both_at_the_model() -> bool:  # so both requests are waiting for the engine
        return len(system.llm.requests) == 2

    assert await eventually(both_at_the_model)

    later = await system.client.post("/v1/messages", json={"text": "more", "wait": False}, headers=family.auth("Ben"))
    assert later.status == 202
    release.set()
    assert (await (await waiting).json())["reply"] == "Here."
    assert "event: stream_end" in await (await streaming).text()
    message_id = (await later.json())["message_id"]

    async def done() -> bool:
        return await system.admin.fetchval("SELECT status FROM inbox WHERE id = $1", message_id) == "done"

    assert await eventually(done)
