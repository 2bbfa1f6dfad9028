"""Lighthouse on the web app's pages in Debian's Chromium, with its mobile and desktop presets: accessibility, best
practices and SEO score 95 or more. Performance depends on the machine's load, so it is measured by
`bench/lighthouse.py`, not asserted here. Lighthouse comes from the npm registry (`.ci/run` installs it into
.cache/lighthouse; LIGHTHOUSE names another `lighthouse` command)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.bot.web.pages.conftest import CHROMIUM_FLAGS, base_url, chromium_path
from tests.bot.web.pages.test_calendar import session
from tests.bot.web.pages.test_pages import _expense
from tests.system import System, make_family

LIGHTHOUSE = Path(
    os.environ.get("LIGHTHOUSE")
    or Path(__file__).parents[4] / ".cache" / "lighthouse" / "node_modules" / ".bin" / "lighthouse"
)
CATEGORIES = ("accessibility", "best-practices", "seo")
PAGES = ("/", "/memories", "/reminders", "/calendar", "/lists", "/money", "/data", "/household")  # every page
PRESETS = ("mobile", "desktop")


def lighthouse_command() -> Path:
    if not LIGHTHOUSE.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"no lighthouse at {LIGHTHOUSE}: .ci/run installs it from the npm registry")
        pytest.skip(f"the Lighthouse audit needs lighthouse: npm install --prefix {LIGHTHOUSE.parents[2]} lighthouse")
    return LIGHTHOUSE


async def audit(url: str, cookie: str, preset: str, categories: tuple[str, ...]) -> dict[str, Any]:
    """Lighthouse's report of one page, as the signed-in member sees it."""
    chromium = chromium_path()
    if chromium is None:
        pytest.skip("the Lighthouse audit needs Chromium: apt-get install chromium")
    return await lighthouse(lighthouse_command(), chromium, url, cookie, preset, categories)


async def lighthouse(
    command: Path, chromium: str, url: str, cookie: str, preset: str, categories: tuple[str, ...]
) -> dict[str, Any]:
    """Run `command` (the lighthouse CLI) on `url` in `chromium` with the session `cookie` and the `preset`
    ("mobile": Lighthouse's default, or "desktop"); its JSON report."""
    flags = [flag for flag in CHROMIUM_FLAGS if not flag.startswith("--use-fake")]
    arguments = [
        url,
        "--output=json",
        "--quiet",
        f"--only-categories={','.join(categories)}",
        f"--chrome-flags={' '.join(flags)}",
        f"--extra-headers={json.dumps({'Cookie': cookie})}",
        "--max-wait-for-load=20000",
    ]
    if preset == "desktop":
        arguments.append("--preset=desktop")
    process = await asyncio.create_subprocess_exec(
        str(command),
        *arguments,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "CHROME_PATH": chromium},
    )
    out, err = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"lighthouse failed on {url}: {err.decode()[-2000:]}")
    report: dict[str, Any] = json.loads(out)
    return report


def failing(report: dict[str, Any], category: str) -> list[str]:
    """The audits of a category that did not pass, by id and title."""
    refs = report["categories"][category]["auditRefs"]
    audits = report["audits"]
    return [
        f"{ref['id']}: {audits[ref['id']]['title']}"
        for ref in refs
        if ref["weight"] > 0 and (audits[ref["id"]].get("score") is not None and audits[ref["id"]]["score"] < 1)
    ]


@pytest.mark.parametrize("preset", PRESETS)
async def test_pages_score_95_or_more_in_accessibility_best_practices_and_seo(system: System, preset: str) -> None:
    lighthouse_command()
    family = await make_family(system.admin, f"Lighthouse {preset}", {"Anna": "Europe/Berlin"})
    await _expense(system, family, "Anna", "Paid 12.30 EUR at the bakery", "12.30", "EUR")
    cookie = (await session(system, family, "Anna"))["Cookie"]
    low: dict[str, Any] = {}
    for path in PAGES:
        report = await audit(base_url(system) + path, cookie, preset, CATEGORIES)
        assert report["finalDisplayedUrl"] == base_url(system) + path  # the page itself, not the sign-in
        for category in CATEGORIES:
            score = round(report["categories"][category]["score"] * 100)
            if score < 95:
                low[f"{path} {category}"] = (score, failing(report, category))
    assert low == {}
