"""axe-core (the accessibility engine behind Lighthouse's audit) on every page of the web app in Chromium, on a phone
and a desktop, light and dark, and on the signed-out pages (sign-in, setup, an invite's join page, offline): no
violations. axe-core comes from the npm registry (`.ci/run` packs it into .cache/axe-core; AXE_CORE names another
axe.min.js)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import pytest
from playwright.async_api import BrowserContext, Page

from tests.bot.web.pages.conftest import base_url, signed_in
from tests.bot.web.pages.test_pages import _expense
from tests.system import System, make_family
from tools.storage import web_sessions

AXE = Path(os.environ.get("AXE_CORE") or Path(__file__).parents[4] / ".cache" / "axe-core" / "axe.min.js")
SCHEMES: tuple[Literal["light", "dark"], ...] = ("light", "dark")
PAGES = ["/", "/memories", "/reminders", "/calendar", "/calendar?view=week", "/calendar?view=month", "/lists",
         "/money", "/data", "/household"]  # fmt: skip


def _axe() -> str:
    if not AXE.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"no axe-core at {AXE}: .ci/run packs it from the npm registry")
        pytest.skip(f"the accessibility audit needs axe-core: npm pack axe-core, unpacked to {AXE.parent}")
    return AXE.read_text()


async def violations(page: Page) -> list[str]:
    found: list[dict[str, Any]] = await page.evaluate("axe.run(document).then(result => result.violations)")
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:5]}" for v in found]


async def test_every_page_has_no_accessibility_violations_on_a_phone_and_a_desktop_light_and_dark(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    script = _axe()
    family = await make_family(system.admin, "Audited", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    await system.admin.execute("UPDATE users SET role = 'owner' WHERE id = $1", family.user_ids["Anna"])
    await _expense(system, family, "Anna", "Paid 12.30 EUR at the bakery", "12.30", "EUR")
    page = await signed_in(system, new_context, family, "Anna")
    await page.add_init_script(script)  # before the page's own scripts, as the browser's, not the page's (CSP)
    await page.goto(base_url(system) + "/")
    csrf = {"X-CSRF-Token": await page.locator("meta[name=csrf-token]").get_attribute("content") or ""}
    added = await page.request.post(
        base_url(system) + "/app/lists/items", data={"list_name": "shopping", "items": [{"text": "milk"}]}, headers=csrf
    )
    assert added.ok
    code = await web_sessions.create_setup_code(system.admin)
    found: dict[str, list[str]] = {}
    for width, height in ((390, 844), (1280, 800)):
        await page.set_viewport_size({"width": width, "height": height})
        for scheme in SCHEMES:
            await page.emulate_media(color_scheme=scheme)
            for path in PAGES:
                await page.goto(base_url(system) + path)
                found[f"{path} {width} {scheme}"] = await violations(page)
            # The household page with an invite made: its sign-in link, QR code, copy button and codes.
            await page.goto(base_url(system) + "/household")
            await page.locator("[data-member=Tom] .invite-button").click()
            await page.wait_for_selector("#invite svg")
            found[f"/household (invite) {width} {scheme}"] = await violations(page)
    outside = await (await new_context()).new_page()
    await outside.add_init_script(script)
    for path in ("/login", f"/setup/{code}", "/join/ABCDE-FGHIJ", "/offline"):
        await outside.goto(base_url(system) + path)
        found[path] = await violations(outside)
    assert {where: problems for where, problems in found.items() if problems} == {}
