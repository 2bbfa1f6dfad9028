"""Behind a reverse proxy that terminates TLS: a trusted proxy's X-Forwarded-Proto / Forwarded header makes the web
app check forms against the https origin and mark its cookies Secure; the same header from any other peer changes
nothing."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import asyncpg
import pytest
from aiohttp import ClientResponse

from bot.web.pages.security import csrf_for_session
from engine.settings import Settings, WebSettings
from tests.fakes.openai_server import FakeOpenAI
from tests.system import System, make_family, running_system
from tools.storage import identities, web_sessions

FORWARDED = {"X-Forwarded-Proto": "https"}


@pytest.fixture(params=[["127.0.0.1"], ["10.0.0.0/8", "::1"]], ids=["from-a-trusted-proxy", "from-another-peer"])
async def system(
    request: pytest.FixtureRequest, settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    """The web app with WEB_TRUSTED_PROXIES; the test client connects from 127.0.0.1."""
    web = WebSettings(reply_wait_s=15, trusted_proxies=request.param)
    async with running_system(settings.model_copy(update={"web": web}), fake_llm, admin_conn, worker=False) as running:
        yield running


def trusted(system: System) -> bool:
    return bool(system.deps.settings.web.trusted_proxies[0].network_address.is_loopback)


def https_origin(system: System) -> dict[str, str]:
    return {"Origin": f"https://{system.client.host}:{system.client.port}"}


async def sign_in_code(system: System, name: str) -> tuple[str, int]:
    family = await make_family(system.admin, name, {"Anna": "Europe/Berlin"})
    async with system.deps.db.household(family.household_id) as conn:
        code = await identities.create_invite(conn, family.household_id, family.user_ids["Anna"])
    return code, family.household_id


async def sign_in(system: System, code: str, headers: dict[str, str]) -> ClientResponse:
    anonymous = secrets.token_urlsafe(32)  # the sign-in form's double-submit CSRF token
    return await system.client.post(
        "/login",
        data={"code": code, "csrf": anonymous},
        cookies={"faa_csrf": anonymous},
        headers=headers,
        allow_redirects=False,
    )


RFC_7239 = {"Forwarded": "for=192.0.2.60;proto=https;by=203.0.113.43"}


@pytest.mark.parametrize("forwarded", [FORWARDED, RFC_7239], ids=["x-forwarded-proto", "rfc7239"])
async def test_a_form_sent_over_https_through_the_proxy(system: System, forwarded: dict[str, str]) -> None:
    code, household_id = await sign_in_code(system, "Proxied")

    signed_in = await sign_in(system, code, {**forwarded, **https_origin(system)})

    if trusted(system):
        assert signed_in.status == 303
        assert signed_in.cookies["faa_session"]["secure"]  # the browser sends it over https only
        token = signed_in.cookies["faa_session"].value
        added = await system.client.post(
            "/household/members",
            data={"name": "Ben", "csrf": csrf_for_session(token)},
            cookies={"faa_session": token},
            headers={**forwarded, **https_origin(system)},
        )
        assert added.status == 200 and "Invite for Ben" in await added.text()
    else:  # anyone can send the header: from this peer the request is plain http, and https is another origin
        assert signed_in.status == 403 and "faa_session" not in signed_in.cookies
    names = await system.admin.fetch("SELECT name FROM users WHERE household_id = $1 ORDER BY id", household_id)
    assert [r["name"] for r in names] == (["Anna", "Ben"] if trusted(system) else ["Anna"])


async def test_plain_http_stays_plain_http(system: System) -> None:
    """With `http` in the header, cookies are not Secure and the http origin is this site's; the anonymous forms'
    CSRF cookie follows the forwarded scheme as the session's does."""
    code, _ = await sign_in_code(system, "Plain")
    http_origin = {"Origin": f"http://{system.client.host}:{system.client.port}"}
    login = await system.client.get("/login", headers=FORWARDED)
    assert bool(login.cookies["faa_csrf"]["secure"]) is trusted(system)

    signed_in = await sign_in(system, code, {"X-Forwarded-Proto": "http", **http_origin})

    assert signed_in.status == 303 and not signed_in.cookies["faa_session"]["secure"]
    async with system.deps.db.unscoped() as conn:
        assert await web_sessions.resolve(conn, signed_in.cookies["faa_session"].value) is not None
