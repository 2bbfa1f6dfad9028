"""WEB_PROCESSES: several web processes on one port, supervised by `faa serve`; the counters of all of them
show in /metrics whichever process answers the scrape."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator

import aiohttp
import asyncpg
import pytest

from bot.ops.supervisor import serve_processes
from engine.errors import ConfigurationError
from engine.metrics import MULTIPROCESS_DIR
from engine.settings import Settings
from tests.e2e.test_metrics import Scrape
from tests.system import free_port, make_family


def with_processes(settings: Settings, port: int, processes: int) -> Settings:
    web = settings.web.model_copy(update={"port": port, "processes": processes})
    return settings.model_copy(update={"web": web})


@pytest.fixture
async def two_processes(settings: Settings) -> AsyncIterator[tuple[str, str]]:
    """Two web processes on a free port: (base URL, their shared metrics directory)."""
    port = free_port()
    stop, ready = asyncio.Event(), asyncio.Event()
    supervisor = asyncio.create_task(serve_processes(with_processes(settings, port, 2), stop=stop, ready=ready))
    await asyncio.wait({supervisor, asyncio.create_task(ready.wait())}, return_when=asyncio.FIRST_COMPLETED)
    if supervisor.done():
        supervisor.result()  # raises what stopped it
    directory = os.environ[MULTIPROCESS_DIR]
    try:
        yield f"http://127.0.0.1:{port}", directory
    finally:
        stop.set()
        await supervisor
    assert not os.path.exists(directory) and MULTIPROCESS_DIR not in os.environ


async def test_messages_spread_over_the_processes_and_every_scrape_counts_all(
    two_processes: tuple[str, str], admin_conn: asyncpg.Connection
) -> None:
    base_url, directory = two_processes
    family = await make_family(admin_conn, "Many", {"Anna": "Europe/Berlin"})
    # A new connection for every request: the kernel picks a process per connection.
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as client:
        for number in range(20):
            body = {"text": f"note {number}", "client_message_id": f"many-{number}", "wait": False}
            async with client.post(f"{base_url}/v1/messages", json=body, headers=family.auth("Anna")) as response:
                assert response.status == 202
        scrapes = []
        for _ in range(6):
            async with client.get(f"{base_url}/metrics") as response:
                scrapes.append(Scrape(await response.text()))

    assert [s.get("faa_messages_received_total", channel="web", duplicate="false") for s in scrapes] == [20.0] * 6
    # Each process counted some of them in its own file (named by its pid).
    assert len([name for name in os.listdir(directory) if name.startswith("counter_")]) == 2
    assert await admin_conn.fetchval("SELECT count(*) FROM inbox WHERE household_id = $1", family.household_id) == 20
    await admin_conn.execute("UPDATE inbox SET status = 'failed', error = 'test over' WHERE status = 'queued'")


async def test_a_process_that_cannot_listen_stops_the_supervisor_with_an_error(settings: Settings) -> None:
    with socket.socket() as taken:  # a listener without SO_REUSEPORT: the web processes cannot share the port
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        with pytest.raises(ConfigurationError, match="did not start"):
            await serve_processes(with_processes(settings, port, 2), stop=asyncio.Event())
    assert MULTIPROCESS_DIR not in os.environ


def test_several_processes_need_a_fixed_port(settings: Settings) -> None:
    with pytest.raises(ValueError, match="WEB_PROCESSES > 1 needs a fixed WEB_PORT"):
        type(settings.web)(processes=2, port=0)
