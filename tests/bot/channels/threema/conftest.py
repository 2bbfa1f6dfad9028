"""Fixtures for the Threema channel: the fake Gateway, FAA's Gateway ID and keys, SDK-driven Threema users."""

from __future__ import annotations

import contextlib
import secrets
import string
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
import pytest

from engine.channel_settings import ThreemaSettings
from engine.settings import Settings
from tests.bot.channels.threema.gateway_fake import FakeGateway, Peer, keypair
from tests.fakes.openai_server import FakeOpenAI
from tests.system import System, running_system

GATEWAY_ID = "*FAATEST"
GATEWAY_SECRET = "gw-secret-for-tests"
PUBLIC_KEY, PRIVATE_KEY = keypair()


@pytest.fixture(scope="session")
async def session_gateway() -> AsyncIterator[FakeGateway]:
    fake = FakeGateway()
    await fake.start()
    fake.secrets[GATEWAY_ID] = GATEWAY_SECRET
    fake.keys[GATEWAY_ID] = PUBLIC_KEY
    yield fake
    await fake.stop()


@pytest.fixture
def gateway(session_gateway: FakeGateway) -> FakeGateway:
    session_gateway.reset()
    return session_gateway


@pytest.fixture
def threema_settings(gateway: FakeGateway) -> ThreemaSettings:
    return ThreemaSettings(
        gateway_id=GATEWAY_ID,
        secret=GATEWAY_SECRET,
        private_key=f"private:{PRIVATE_KEY.hex()}",
        base_url=gateway.base_url,
        timeout_s=5,
    )


@contextlib.asynccontextmanager
async def _system(
    settings: Settings, threema: ThreemaSettings, fake_llm: FakeOpenAI, admin: asyncpg.Connection, *, worker: bool
) -> AsyncIterator[System]:
    async with running_system(settings.model_copy(update={"threema": threema}), fake_llm, admin, worker=worker) as run:
        yield run


@pytest.fixture
async def threema_system(
    settings: Settings, threema_settings: ThreemaSettings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    """Web app with the Threema callback, a worker with the Threema sender, real Postgres and Redis."""
    async with _system(settings, threema_settings, fake_llm, admin_conn, worker=True) as running:
        yield running


@pytest.fixture
async def threema_web(
    settings: Settings, threema_settings: ThreemaSettings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    """The web side alone: for requests that must never reach a worker (forged, malformed, strangers)."""
    async with _system(settings, threema_settings, fake_llm, admin_conn, worker=False) as running:
        yield running


def _threema_id() -> str:
    return "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(8))


@pytest.fixture
async def make_peer(gateway: FakeGateway) -> AsyncIterator[Callable[[], Awaitable[Peer]]]:
    peers: list[Peer] = []

    async def make() -> Peer:
        peer = Peer.create(gateway, _threema_id(), GATEWAY_ID, GATEWAY_SECRET)
        peers.append(peer)
        return peer

    yield make
    for peer in peers:
        await peer.close()
