"""Fixtures for the web app's tests in a real headless Chromium (Debian's `chromium`, driven by Playwright's
Python API): one browser for the session, a fresh context (cookies) per member, and the whole system behind it."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from tests.system import Family, System
from tools.storage import web_sessions
from tools.storage.households import Principal
from tools.storage.identities import create_invite

# Chromium on a closed network: no background connections to Google's services, no first-run work.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # A microphone that plays a beep, granted without asking: the chat's voice notes are recorded in the tests.
    "--use-fake-device-for-media-stream",
    "--use-fake-ui-for-media-stream",
]


def chromium_path() -> str | None:
    return os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    executable = chromium_path()
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail("no chromium: .ci/run installs Debian's chromium package")
        pytest.skip("the web app's browser tests need Chromium: apt-get install chromium")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield launched
        await launched.close()


@pytest.fixture
async def new_context(browser: Browser) -> AsyncIterator[Callable[[], Awaitable[BrowserContext]]]:
    """Open browser contexts (each its own cookies), all closed at the end of the test."""
    opened: list[BrowserContext] = []
    refused: list[str] = []  # what the Content-Security-Policy blocked: nothing may be

    async def open_one() -> BrowserContext:
        context = await browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US")
        context.set_default_timeout(15_000)
        context.on(
            "console", lambda message: refused.append(message.text) if "Content Security" in message.text else None
        )
        opened.append(context)
        return context

    yield open_one
    for context in opened:
        await context.close()
    assert refused == []


def base_url(system: System) -> str:
    return str(system.client.make_url("")).rstrip("/")


async def signed_in(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]], family: Family, member: str
) -> Page:
    """A page whose browser holds a session of `member` (opened as a sign-in link would open it)."""
    principal: Principal = family.principal(member)
    async with system.deps.db.household(principal.household_id) as conn:
        code = await create_invite(conn, principal.household_id, principal.user_id)
    async with system.deps.db.unscoped() as conn:
        opened = await web_sessions.open_session(conn, code)
    assert opened is not None
    context = await new_context()
    await context.add_cookies([{"name": "faa_session", "value": opened[1], "url": base_url(system)}])
    return await context.new_page()
