"""First run in Chromium: the setup link creates the household and its first adult, who invites the next member;
the invite's sign-in link (QR code) signs that member in on another device. Plus sessions and CSRF."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from playwright.async_api import BrowserContext, expect

from tests.bot.web.pages.conftest import base_url, signed_in
from tests.system import System, make_family
from tools.storage import web_sessions


async def test_the_setup_link_creates_the_household_whose_adult_invites_the_others(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    code = await web_sessions.create_setup_code(system.admin)
    owner = await (await new_context()).new_page()
    await owner.goto(f"{base_url(system)}/setup/{code}")
    early = await (await new_context()).new_page()  # the same link, opened in another browser before it is used
    await early.goto(f"{base_url(system)}/setup/{code}")
    await owner.fill("input[name=household]", "The Lins")
    await owner.fill("input[name=name]", "Mei")
    await owner.select_option("select[name=timezone]", "Asia/Shanghai")
    await owner.select_option("select[name=locale]", "zh")
    await owner.click("#create-household")

    await expect(owner.locator("h1")).to_have_text("The Lins")
    await expect(owner.locator("[data-member=Mei] .badge")).to_have_text("创建者")  # her language from now on
    await owner.fill("#add-member input[name=name]", "Jun")
    await owner.select_option("#add-member select[name=role]", "child")
    await owner.click("#add-member button[type=submit]")

    await expect(owner.locator("#invite svg")).to_be_visible()  # the QR code, drawn on the server
    await expect(owner.locator("#invite-code")).to_have_text(re.compile(r"^[A-Z2-9]{5}-[A-Z2-9]{5}$"))
    link = (await owner.locator("#invite-link").text_content() or "").strip()
    await owner.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url(system))
    await owner.locator("#copy-link").click()  # a button copies the link, to paste into a message to Jun
    await expect(owner.locator("#invite-status")).to_have_text(re.compile("^已复制"))
    assert await owner.evaluate("navigator.clipboard.readText()") == link
    row = await system.admin.fetchrow("SELECT h.id, h.timezone FROM households h WHERE h.name = 'The Lins'")
    assert row["timezone"] == "Asia/Shanghai"
    roles = await system.admin.fetch("SELECT name, role FROM users WHERE household_id = $1 ORDER BY id", row["id"])
    assert [(r["name"], r["role"]) for r in roles] == [("Mei", "owner"), ("Jun", "child")]

    child = await (await new_context()).new_page()
    await child.goto(link)
    await child.click("#join")
    await expect(child.locator(".msg.hello")).to_contain_text("Jun")
    await expect(child.locator("nav a[href='/household']")).to_have_count(0)  # a child has no household page
    forbidden = await child.goto(f"{base_url(system)}/household")
    assert forbidden is not None and forbidden.status == 403

    again = await (await new_context()).new_page()  # the link worked once
    await again.goto(link)
    await again.click("#join")
    await expect(again.locator(".error")).to_be_visible()
    # And so did the setup link: opened again, it says so before any form, and where to sign in instead.
    reused = await (await new_context()).new_page()
    opened = await reused.goto(f"{base_url(system)}/setup/{code}")
    assert opened is not None and opened.status == 410
    await expect(reused.locator("h1")).to_have_text("Your household is set up")
    await expect(reused.locator("input[name=household]")).to_have_count(0)
    await expect(reused.locator("main")).not_to_contain_text("faa up")
    await reused.get_by_role("link", name="Go to sign-in").click()
    await expect(reused.locator("h1")).to_have_text("Sign in")
    await early.fill("input[name=household]", "Again")  # the form opened before: sent after, it makes nothing
    await early.fill("input[name=name]", "Eve")
    await early.click("#create-household")
    await expect(early.locator("h1")).to_have_text("Your household is set up")
    assert await system.admin.fetchval("SELECT count(*) FROM households WHERE name = 'Again'") == 0
    unknown = await (await new_context()).new_page()
    await unknown.goto(f"{base_url(system)}/setup/not-a-code")
    await expect(unknown.locator("h1")).to_have_text("This setup link no longer works")


async def test_pages_need_a_session_and_signing_out_ends_it(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Outside", {"Anna": "Europe/Berlin"})
    stranger = await (await new_context()).new_page()
    for path in ("/", "/memories", "/reminders", "/money", "/household"):
        await stranger.goto(base_url(system) + path)
        assert stranger.url.endswith("/login"), path

    page = await signed_in(system, new_context, family, "Anna")
    await page.goto(base_url(system) + "/")
    cookies = {c["name"]: c for c in await page.context.cookies()}
    response = await page.goto(base_url(system) + "/")
    assert response is not None
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["x-frame-options"] == "DENY"
    await page.click(".logout button")
    assert page.url.endswith("/login")
    old = cookies["faa_session"]["value"]
    await page.context.add_cookies([{"name": "faa_session", "value": old, "url": base_url(system)}])  # replayed
    await page.goto(base_url(system) + "/")
    assert page.url.endswith("/login")


async def test_a_post_without_the_csrf_token_or_from_another_origin_is_refused(system: System) -> None:
    family = await make_family(system.admin, "Forged", {"Anna": "Europe/Berlin"})
    async with system.deps.db.household(family.household_id) as conn:
        from tools.storage.identities import create_invite

        code = await create_invite(conn, family.household_id, family.user_ids["Anna"])
    async with system.deps.db.unscoped() as conn:
        opened = await web_sessions.open_session(conn, code)
    assert opened is not None
    token = opened[1]
    cookies = {"faa_session": token}
    client = system.client
    good = security_csrf(token)

    without = await client.post("/household/members", data={"name": "Mallory"}, cookies=cookies)
    wrong = await client.post("/household/members", data={"name": "Mallory", "csrf": "x" * 64}, cookies=cookies)
    foreign = await client.post(
        "/household/members",
        data={"name": "Mallory", "csrf": good},
        cookies=cookies,
        headers={"Origin": "https://evil.example"},
    )
    assert [without.status, wrong.status, foreign.status] == [403, 403, 403]
    assert await system.admin.fetchval("SELECT count(*) FROM users WHERE name = 'Mallory'") == 0
    stream = await client.post("/app/chat/stream", json={"text": "hi", "client_message_id": "x1"}, cookies=cookies)
    assert stream.status == 403
    ok = await client.post("/household/members", data={"name": "Ben", "csrf": good}, cookies=cookies)
    assert ok.status == 200 and "Invite for Ben" in await ok.text()


def security_csrf(token: str) -> str:
    from bot.web.pages.security import csrf_for_session

    return csrf_for_session(token)
