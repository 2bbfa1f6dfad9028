"""Memories, reminders and money in Chromium, each read through the member's household (row-level security)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from playwright.async_api import BrowserContext, expect

from tests.bot.web.pages.conftest import base_url, signed_in
from tests.system import Family, System, make_family
from tools.storage import memories, reminders


async def _expense(
    system: System, family: Family, member: str, text: str, amount: str, currency: str, **extra: str
) -> int:
    async with system.deps.db.household(family.household_id, family.user_ids[member]) as conn:
        row = await memories.insert(
            conn,
            household_id=family.household_id,
            author_id=family.user_ids[member],
            content=text,
            understanding={"kind": "expense", "category": extra.get("category", "groceries")},
            embedding=[0.1] * 64,
            amount=Decimal(amount),
            currency=currency,
            occurred_at=datetime.fromisoformat(extra.get("at", datetime.now(UTC).isoformat())),
            visibility=extra.get("visibility", "household"),
            source_inbox_id=None,
        )
    return int(row["id"])


async def test_a_memory_is_forgotten_and_brought_back_with_undo(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Forgetful", {"Anna": "Europe/Berlin"})
    kept = await _expense(system, family, "Anna", "Paid 12.30 EUR at the bakery", "12.30", "EUR")
    gone = await _expense(system, family, "Anna", "Paid 99 EUR twice by mistake", "99", "EUR")
    page = await signed_in(system, new_context, family, "Anna")
    await page.goto(base_url(system) + "/memories")
    await expect(page.locator("#memories > li")).to_have_count(2)

    await page.locator(f"[data-memory='{gone}'] button.forget").click()
    await expect(page.locator("#memories > li")).to_have_count(1)
    await expect(page.locator(f"[data-memory='{kept}']")).to_be_visible()
    assert await system.admin.fetchval("SELECT deleted_at IS NOT NULL FROM memories WHERE id = $1", gone)

    await page.locator("#undo button").click()
    await expect(page.locator("#memories > li")).to_have_count(2)
    assert await system.admin.fetchval("SELECT deleted_at IS NULL FROM memories WHERE id = $1", gone)

    await page.fill("input[name=q]", "bakery")
    await page.keyboard.press("Enter")
    await expect(page.locator("#memories > li")).to_have_count(1)
    await page.locator(f"[data-memory='{kept}'] summary").click()
    await page.locator(f"[data-memory='{kept}'] input[name=amount]").fill("13.30")
    await page.locator(f"[data-memory='{kept}'] form.stack button").click()
    await expect(page.locator(f"[data-memory='{kept}'] strong")).to_have_text("13.30 EUR")


async def test_a_reminder_is_snoozed_and_created_from_the_page(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Sleepy", {"Anna": "Europe/Berlin"})
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=5)
    async with system.deps.db.household(family.household_id) as conn:
        row = await reminders.insert(
            conn,
            household_id=family.household_id,
            created_by=family.user_ids["Anna"],
            recipient_ids=[family.user_ids["Anna"]],
            text="Water the plants",
            timezone="Europe/Berlin",
            rrule=None,
            first_fire_at=due,
            dtstart_local=due.replace(tzinfo=None),
            for_household=False,
            source_inbox_id=None,
        )
    page = await signed_in(system, new_context, family, "Anna")
    await page.goto(base_url(system) + "/reminders")
    item = page.locator(f"[data-reminder='{row['id']}']")
    await item.locator("select[name=minutes]").select_option("60")
    await item.locator("button.snooze").click()

    await expect(page.locator(f"[data-reminder='{row['id']}'] .text")).to_have_text("Water the plants")
    fire_at = await system.admin.fetchval("SELECT next_fire_at FROM reminders WHERE id = $1", row["id"])
    assert timedelta(minutes=59) <= fire_at - datetime.now(UTC) <= timedelta(minutes=61)

    await page.fill("#new-reminder input[name=text]", "Call grandma")
    await page.fill("#new-reminder input[name=when]", "2031-05-04T18:30")
    await page.select_option("#new-reminder select[name=repeat]", "weekly")
    await page.click("#new-reminder button[type=submit]")
    await expect(page.locator("#reminders .text", has_text="Call grandma")).to_be_visible()
    created = await system.admin.fetchrow(
        "SELECT rrule, next_fire_at FROM reminders WHERE household_id = $1 AND text = 'Call grandma'",
        family.household_id,
    )
    assert created["rrule"] == "FREQ=WEEKLY"
    assert created["next_fire_at"] == datetime(2031, 5, 4, 16, 30, tzinfo=UTC)  # 18:30 in Berlin (summer time)

    await page.locator(f"[data-reminder='{row['id']}'] button.complete").click()
    await expect(page.locator(f"[data-reminder='{row['id']}']")).to_have_count(0)
    await page.fill("#quiet-hours input[name=start]", "22:00")
    await page.fill("#quiet-hours input[name=end]", "07:00")
    await page.click("#quiet-hours button")
    quiet = await system.admin.fetchrow(
        "SELECT quiet_start, quiet_end FROM users WHERE id = $1", family.user_ids["Anna"]
    )
    assert (quiet["quiet_start"].hour, quiet["quiet_end"].hour) == (22, 7)


async def test_the_money_page_shows_the_totals_sql_computes_and_a_csv(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Thrifty", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    march = "2026-03-15T12:00:00+00:00"
    await _expense(system, family, "Anna", "Groceries at Lidl", "35.50", "EUR", at=march)
    await _expense(system, family, "Ben", "Groceries at Rewe", "14.25", "EUR", at=march)
    await _expense(system, family, "Anna", "Train to Basel", "80", "CHF", category="travel", at=march)
    await _expense(system, family, "Ben", "Ben's secret", "500", "EUR", at=march, visibility="private")
    await _expense(system, family, "Anna", "April rent", "900", "EUR", category="rent", at="2026-04-01T10:00:00+00:00")
    page = await signed_in(system, new_context, family, "Anna")
    await page.goto(base_url(system) + "/money?month=2026-03")

    expected = await system.admin.fetch(
        """SELECT currency, sum(amount)::text AS total FROM memories
           WHERE household_id = $1 AND deleted_at IS NULL AND kind = 'expense'
             AND (visibility = 'household' OR author_id = $2)
             AND occurred_at >= '2026-03-01T00:00:00+01:00' AND occurred_at < '2026-04-01T00:00:00+02:00'
           GROUP BY currency""",
        family.household_id,
        family.user_ids["Anna"],
    )
    assert {r["currency"]: r["total"] for r in expected} == {"EUR": "49.75", "CHF": "80.00"}
    for row in expected:
        await expect(page.locator(f"#totals td[data-currency='{row['currency']}']")).to_have_text(row["total"])
    await expect(page.locator("#categories tr[data-category=travel] td.num")).to_have_text("80.00")
    await expect(page.locator(".bars rect")).to_have_count(2)

    async with page.expect_download() as download_info:
        await page.click("#csv")
    download = await download_info.value
    lines = Path(await download.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == "date,category,what,amount,currency,member"
    assert sorted(lines[1:]) == [
        "2026-03-15,groceries,Groceries at Lidl,35.50,EUR,Anna",
        "2026-03-15,groceries,Groceries at Rewe,14.25,EUR,Ben",
        "2026-03-15,travel,Train to Basel,80.00,CHF,Anna",
    ]
    await page.click("#month-nav a.next")
    await expect(page.locator("#totals td[data-currency=EUR]")).to_have_text("900.00")


async def test_a_private_memory_shows_to_its_author_only(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Discreet", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    secret = await _expense(system, family, "Ben", "A present for Anna", "60", "EUR", visibility="private")
    ben = await signed_in(system, new_context, family, "Ben")
    await ben.goto(base_url(system) + "/memories")
    await expect(ben.locator(f"[data-memory='{secret}'] .badge")).to_have_text("private")
    anna = await signed_in(system, new_context, family, "Anna")
    await anna.goto(base_url(system) + "/memories")
    await expect(anna.locator("#memories [data-memory]")).to_have_count(0)


async def test_a_member_of_another_household_sees_none_of_it(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    first = await make_family(system.admin, "First", {"Anna": "Europe/Berlin"})
    other = await make_family(system.admin, "Other", {"Olga": "Europe/Berlin"})
    now = datetime.now(UTC).isoformat()
    secret = await _expense(system, first, "Anna", "First family's groceries", "42.00", "EUR", at=now)
    page = await signed_in(system, new_context, other, "Olga")
    base = base_url(system)

    await page.goto(base + "/memories")
    await expect(page.locator("#memories [data-memory]")).to_have_count(0)
    await page.goto(base + "/money")
    await expect(page.locator("#totals td[data-currency]")).to_have_count(0)
    await page.goto(base + "/household")
    await expect(page.locator("#members > li")).to_have_count(1)
    await expect(page.locator("body")).not_to_contain_text("Anna")
    forged = await page.request.post(
        f"{base}/memories/{secret}/forget",
        form={"csrf": await page.locator("meta[name=csrf-token]").get_attribute("content") or ""},
    )
    assert forged.status == 404
    assert await system.admin.fetchval("SELECT deleted_at IS NULL FROM memories WHERE id = $1", secret)
    media_id = await system.admin.fetchval(
        "INSERT INTO media (household_id, kind, mime, data) VALUES ($1, 'chart', 'image/png', '\\x89') RETURNING id",
        first.household_id,
    )
    assert (await page.request.get(f"{base}/app/media/{media_id}")).status == 404
