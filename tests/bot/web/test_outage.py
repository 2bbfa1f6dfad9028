"""While PostgreSQL is down the web API answers 503 with Retry-After, never 500: a client that waits gets through."""

from __future__ import annotations

import dataclasses

import asyncpg
from aiohttp.test_utils import TestClient, TestServer

from bot.web.app import create_app
from tests.system import System, free_port, make_family
from tools.storage.database import Database


async def test_requests_get_503_with_retry_after_while_the_database_is_down(system: System) -> None:
    family = await make_family(system.admin, "Down", {"Anna": "Europe/Berlin"})
    # A pool on a port nothing listens on: every connection is refused, as with a stopped PostgreSQL.
    down = await asyncpg.create_pool(f"postgresql://faa_app@127.0.0.1:{free_port()}/faa", min_size=0, max_size=2)
    client = TestClient(TestServer(create_app(dataclasses.replace(system.deps, db=Database(down)))))
    await client.start_server()
    try:
        for method, path, body in (
            ("POST", "/v1/messages", {"text": "I spent 3 euros on bread", "wait": False}),
            ("GET", "/v1/messages/1", None),
            ("GET", "/v1/notifications", None),
        ):
            response = await client.request(method, path, json=body, headers=family.auth("Anna"))
            assert response.status == 503, path
            assert int(response.headers["Retry-After"]) > 0
            assert (await response.json())["error"]["code"] == "unavailable"
    finally:
        await client.close()
        await down.close()
