"""The lists page and its JSON twin, and budgets on the money page, in Chromium: items added, ticked, assigned,
taken off and cleared by two members (a child takes off only what it added); budgets set by an adult (a child sees
them but cannot change them)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import BrowserContext, Page, expect

from tests.bot.web.pages.conftest import base_url, signed_in
from tests.system import Family, System, make_family


async def _items(system: System, family: Family) -> list[tuple[str, str | None, str | None, bool]]:
    rows = await system.admin.fetch(
        """SELECT i.text, i.quantity, u.name AS assignee, i.done_at IS NOT NULL AS done FROM list_items i
           LEFT JOIN users u ON u.id = i.assignee_id
           WHERE i.household_id = $1 AND i.cleared_at IS NULL ORDER BY i.id""",
        family.household_id,
    )
    return [(r["text"], r["quantity"], r["assignee"], r["done"]) for r in rows]


async def _post_json(system: System, page: Page, path: str, body: Any) -> tuple[int, Any]:
    """A JSON call of the page's own session, with the CSRF token its forms carry."""
    csrf = await page.locator("input[name=csrf]").first.get_attribute("value")
    response = await page.request.post(base_url(system) + path, data=body, headers={"X-CSRF-Token": csrf or ""})
    return response.status, await response.json()


async def test_two_members_keep_a_list_on_the_page_and_through_json(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Listing", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
    anna = await signed_in(system, new_context, family, "Anna")
    await anna.goto(base_url(system) + "/lists")
    await anna.fill("#new-item input[name=text]", "flour")
    await anna.fill("#new-item input[name=quantity]", "2 kg")
    await anna.locator("#new-item button").click()
    await expect(anna.locator("[data-list='shopping'] li[data-item]")).to_have_count(1)

    tom = await signed_in(system, new_context, family, "Tom")
    await tom.goto(base_url(system) + "/lists")
    status, added = await _post_json(
        system, tom, "/app/lists/items", {"list_name": "Einkaufsliste", "items": [{"text": "milk"}]}
    )
    assert status == 200 and added["list_name"] == "shopping"
    milk = added["items"][0]["item_id"]
    status, refused = await _post_json(system, tom, f"/app/lists/items/{milk}", {"assignee": "Grandma"})
    assert status == 400 and "not a member" in refused["error"]["message"]
    status, _ = await _post_json(system, tom, "/app/lists/items/999999999", {"done": True})
    assert status == 404

    await anna.reload()
    await anna.locator(f"li[data-item='{milk}'] button.tick").click()
    item = anna.locator(f"li[data-item='{milk}']")
    await expect(item).to_have_class("item done")
    await expect(item.locator("s")).to_have_text("milk")  # ticked: struck through
    await item.locator("summary").click()
    await item.locator("select[name=assignee]").select_option("Tom")
    await item.locator("button.save").click()
    await expect(anna.locator(f"li[data-item='{milk}'] .who")).to_have_text("Tom")
    assert await _items(system, family) == [("flour", "2 kg", None, False), ("milk", None, "Tom", True)]

    listed = await tom.request.get(base_url(system) + "/app/lists")  # as the page shows it: ticked items too
    assert [(i["text"], i["done"]) for i in (await listed.json())["lists"][0]["items"]] == [
        ("flour", False),
        ("milk", True),
    ]
    await anna.locator("[data-list='shopping'] button.clear").click()
    await expect(anna.locator("[data-list='shopping'] li[data-item]")).to_have_count(1)
    assert await _items(system, family) == [("flour", "2 kg", None, False)]


async def test_an_item_not_needed_is_taken_off_on_the_page_and_through_json(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Removing", {"Anna": "Europe/Berlin", "Kid": "Europe/Berlin"})
    await system.admin.execute("UPDATE users SET role = 'child' WHERE id = $1", family.user_ids["Kid"])
    anna = await signed_in(system, new_context, family, "Anna")
    await anna.set_viewport_size({"width": 390, "height": 844})  # a phone
    await anna.goto(base_url(system) + "/lists")
    status, added = await _post_json(
        system, anna, "/app/lists/items", {"items": [{"text": "milk"}, {"text": "bread"}, {"text": "eggs"}]}
    )
    assert status == 200
    milk, bread, eggs = (item["item_id"] for item in added["items"])
    kid = await signed_in(system, new_context, family, "Kid")
    await kid.goto(base_url(system) + "/lists")
    status, added = await _post_json(system, kid, "/app/lists/items", {"items": [{"text": "sweets"}]})
    sweets = added["items"][0]["item_id"]

    # A child's account takes off only what it added: refused as any other change it may not make.
    status, refused = await _post_json(system, kid, f"/app/lists/items/{milk}/remove", {})
    assert status == 403 and refused["error"]["code"] == "not_allowed"
    assert (await _post_json(system, kid, f"/app/lists/items/{milk}", {"quantity": "3"})) == (status, refused)
    status, missing = await _post_json(system, kid, "/app/lists/items/999999999/remove", {})
    assert status == 404 and missing["error"]["code"] == "not_found"
    assert (await _post_json(system, kid, "/app/lists/items/999999999", {"done": True}))[0] == 404
    status, removed = await _post_json(system, anna, f"/app/lists/items/{bread}/remove", {})
    assert (status, removed) == (200, {"list_name": "shopping", "text": "bread", "cleared": [bread]})
    assert (await _post_json(system, anna, f"/app/lists/items/{bread}/remove", {}))[0] == 404  # gone already

    await kid.reload()
    await expect(kid.get_by_role("button", name="Remove milk")).to_have_count(0)  # not the child's to take off
    await kid.get_by_role("button", name="Remove sweets").click()
    await expect(kid.locator(f"li[data-item='{sweets}']")).to_have_count(0)

    await anna.reload()
    remove = anna.get_by_role("button", name="Remove milk")
    row, text = await remove.bounding_box(), await anna.locator(f"li[data-item='{milk}'] .text").bounding_box()
    assert row is not None and text is not None and abs(row["y"] - text["y"]) < row["height"]  # on the item's line
    await remove.click()
    await expect(anna.locator(f"li[data-item='{milk}']")).to_have_count(0)
    assert await _items(system, family) == [("eggs", None, None, False)]
    ticked = await system.admin.fetchval("SELECT count(*) FROM list_items WHERE done_at IS NOT NULL AND id = $1", milk)
    assert ticked == 0  # taken off, never ticked


async def test_budgets_on_the_money_page(system: System, new_context: Callable[[], Awaitable[BrowserContext]]) -> None:
    family = await make_family(system.admin, "Budgeting", {"Anna": "Europe/Berlin", "Kid": "Europe/Berlin"})
    await system.admin.execute("UPDATE users SET role = 'child' WHERE id = $1", family.user_ids["Kid"])
    anna = await signed_in(system, new_context, family, "Anna")
    await anna.goto(base_url(system) + "/money")
    await anna.fill("#set-budget input[name=category]", "Groceries")
    await anna.fill("#set-budget input[name=amount]", "400")
    await anna.locator("#set-budget button").click()
    row = anna.locator("[data-budget='groceries']")
    await expect(row.locator(".left")).to_have_text("400.00")
    await anna.fill("#set-budget input[name=category]", "fuel")
    await anna.fill("#set-budget input[name=amount]", "-5")
    await anna.locator("#set-budget button").click()
    await expect(anna.locator("#budgets .error")).to_be_visible()

    kid = await signed_in(system, new_context, family, "Kid")
    await kid.goto(base_url(system) + "/money")
    await expect(kid.locator("[data-budget='groceries']")).to_be_visible()
    await expect(kid.locator("#set-budget")).to_have_count(0)
    budgets = await (await kid.request.get(base_url(system) + "/app/budgets")).json()
    assert [(b["category"], b["amount"], b["spent"]) for b in budgets["budgets"]] == [("groceries", "400.00", "0.00")]

    await anna.locator("[data-budget='groceries'] button.danger").click()
    await expect(anna.locator("[data-budget='groceries']")).to_have_count(0)
