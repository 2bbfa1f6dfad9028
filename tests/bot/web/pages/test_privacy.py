"""Private means private in the web app, in Chromium: the privacy and roles matrix (`tests/privacy_matrix.py`) on
the forms and the JSON endpoints — each member sees their own rows and everyone's shared ones, with a private badge,
and what they may change changes, while the rest answers 403 or 404 and changes nothing — and the defects of issue
30 that the web app showed."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.async_api import BrowserContext, Page, expect

from tests.bot.web.pages.conftest import base_url, signed_in
from tests.privacy_matrix import (
    KINDS,
    ROLES,
    STATUS,
    Row,
    call,
    changed,
    expected,
    family_of_three,
    rows_for,
)
from tests.system import Family, System, make_family
from tools.storage import feeds

NewContext = Callable[[], Awaitable[BrowserContext]]
PAGES = {"memory": "/memories", "event": "/calendar", "reminder": "/reminders", "list_item": "/lists"}
SELECTORS = {
    "memory": "[data-memory='{id}']",
    "event": "[data-event='{id}']",
    "reminder": "[data-reminder='{id}']",
    "list_item": "li[data-item='{id}']",
}


async def _csrf(page: Page) -> str:
    return await page.locator("meta[name=csrf-token]").get_attribute("content") or ""


def _form(row: Row, marker: str) -> tuple[str, dict[str, str]]:
    """The form post each kind's change makes (as its page's form sends it; a list item is assigned to `marker`)."""
    if row.kind == "memory":
        return f"/memories/{row.id}/edit", {"content": marker}
    if row.kind == "event":
        return f"/calendar/{row.id}/cancel", {}
    if row.kind == "reminder":
        return f"/reminders/{row.id}/cancel", {}
    return f"/lists/items/{row.id}/assign", {"assignee": marker}


def _json(row: Row, marker: str) -> tuple[str, dict[str, Any]]:
    """The JSON call each kind's change makes (a list item's quantity becomes `marker`)."""
    if row.kind == "memory":
        return f"/app/memories/{row.id}", {"content": marker}
    if row.kind == "event":
        return f"/app/events/{row.id}/cancel", {}
    if row.kind == "reminder":
        return f"/app/reminders/{row.id}/cancel", {}
    return f"/app/lists/items/{row.id}", {"quantity": marker}


async def _submit_in_page(page: Page, row: Row, marker: str) -> int:
    """Change the row through its page, as the member would: the status the browser got back."""
    item = page.locator(SELECTORS[row.kind].format(id=row.id))
    async with page.expect_response(lambda r: r.request.method == "POST") as answer:
        if row.kind == "memory":
            await item.locator("summary").first.click()
            await item.locator("textarea[name=content]").fill(marker)
            await item.locator("form.stack button").click()
        elif row.kind == "list_item":
            await item.locator("details.edit summary").click()
            await item.locator("details.edit select[name=assignee]").select_option(marker)
            await item.locator("button.save").click()
        else:
            page.once("dialog", lambda dialog: dialog.accept())  # "Cancel …?" / "Cancel the reminder?"
            await item.locator("button.cancel").click()
    response = await answer.value
    await page.wait_for_load_state()
    return 200 if response.status == 303 else response.status


async def _form_changed(system: System, family: Family, row: Row, marker: str) -> bool:
    if row.kind != "list_item":
        return await changed(system.admin, row, marker)
    assignee = await system.admin.fetchval("SELECT assignee_id FROM list_items WHERE id = $1", row.id)
    return bool(assignee == family.user_ids[marker])


@pytest.mark.parametrize("actor", list(ROLES))
async def test_the_forms_in_chromium(system: System, new_context: NewContext, actor: str) -> None:
    family = await family_of_three(system.admin, f"Forms {actor}")
    rows = await rows_for(system, family, actor)
    page = await signed_in(system, new_context, family, actor)
    for row in rows:
        marker = actor if row.kind == "list_item" else f"changed by {actor}"
        await page.goto(base_url(system) + PAGES[row.kind])
        item = page.locator(SELECTORS[row.kind].format(id=row.id))
        listed = await item.count() > 0
        want = expected(ROLES[actor], row)
        assert listed <= row.visible, row.label  # the reminders page lists another member's own ones nowhere
        if listed:
            await expect(item.locator(".badge.private")).to_have_count(1 if row.visibility == "private" else 0)
            status = await _submit_in_page(page, row, marker)
        else:  # a row the page does not show, posted as a forged form would be
            path, fields = _form(row, marker)
            response = await page.request.post(base_url(system) + path, form={"csrf": await _csrf(page), **fields})
            status = response.status
        assert status == STATUS[want], row.label
        assert await _form_changed(system, family, row, marker) == (want == "changed"), row.label


@pytest.mark.parametrize("actor", list(ROLES))
async def test_the_json_endpoints(system: System, new_context: NewContext, actor: str) -> None:
    family = await family_of_three(system.admin, f"Json {actor}")
    rows = await rows_for(system, family, actor)
    page = await signed_in(system, new_context, family, actor)
    await page.goto(base_url(system) + "/lists")
    listed = await (await page.request.get(base_url(system) + "/app/lists?include_done=1")).json()
    shown = {item["item_id"]: item for view in listed["lists"] for item in view["items"]}
    for row in rows:
        if row.kind == "list_item":
            assert (row.id in shown) == row.visible, row.label
            if row.visible:
                assert shown[row.id]["visibility"] == ("private" if row.visibility == "private" else "household")
    marker = f"changed by {actor}"
    for row in rows:
        path, body = _json(row, marker)
        response = await page.request.post(
            base_url(system) + path, data=body, headers={"X-CSRF-Token": await _csrf(page)}
        )
        want = expected(ROLES[actor], row)
        assert response.status == STATUS[want], row.label
        answer = await response.json()
        if want != "changed":
            assert answer["error"]["code"] == {"refused": "not_allowed", "not_found": "not_found"}[want]
            assert "show_list" not in answer["error"]["message"] and "list_reminders" not in answer["error"]["message"]
        assert await changed(system.admin, row, marker) == (want == "changed"), row.label


@dataclass(frozen=True)
class Write:
    """One more write of the web app, as its form and its JSON endpoint make it (`form` None: no page offers it).
    `state` reads what the write changes, so the test sees whether it reached the row; `answers`: the write only
    answers the row, which a child may do where it is addressed to them (`_answers`)."""

    kind: str
    form: tuple[str, dict[str, str]] | None
    json: tuple[str, dict[str, Any]]
    state: str
    answers: bool = False


_LATER = (datetime.now(UTC) + timedelta(days=9)).replace(microsecond=0, second=0).isoformat()
WRITES = {
    "forget memory": Write(
        "memory", ("/memories/{id}/forget", {}), ("/app/memories/{id}/forget", {}),
        "SELECT deleted_at IS NOT NULL FROM memories WHERE id = $1",
    ),
    "move event": Write(
        "event", None, ("/app/events/{id}/move", {"start": _LATER}), "SELECT starts_at FROM events WHERE id = $1"
    ),
    "snooze reminder": Write(
        "reminder", ("/reminders/{id}/snooze", {"minutes": "15"}), ("/app/reminders/{id}/snooze", {"minutes": 15}),
        "SELECT next_fire_at FROM reminders WHERE id = $1", answers=True,
    ),
    "complete reminder": Write(
        "reminder", ("/reminders/{id}/complete", {}), ("/app/reminders/{id}/complete", {}),
        "SELECT status FROM reminders WHERE id = $1", answers=True,
    ),
    "tick item": Write(
        "list_item", ("/lists/items/{id}/tick", {"done": "1"}), ("/app/lists/items/{id}", {"done": True}),
        "SELECT done_at IS NOT NULL FROM list_items WHERE id = $1", answers=True,
    ),
    "edit item": Write(
        "list_item", ("/lists/items/{id}/edit", {"quantity": "7 packs"}), ("/app/lists/items/{id}", {"quantity": "7"}),
        "SELECT quantity FROM list_items WHERE id = $1",
    ),
    "remove item": Write(
        "list_item", ("/lists/items/{id}/remove", {}), ("/app/lists/items/{id}/remove", {}),
        "SELECT cleared_at IS NOT NULL FROM list_items WHERE id = $1",
    ),
}  # fmt: skip


def _answers(write: Write, row: Row) -> bool:
    """Whether the write only answers a row addressed to the acting member: any item of a list they see; a
    reminder of their own or the household's (another member's own reminder is not addressed to them)."""
    return write.answers and (write.kind == "list_item" or row.owner in ("own", "household"))


@pytest.mark.parametrize("path", ["form", "json"])
@pytest.mark.parametrize("actor", list(ROLES))
async def test_every_other_write_of_the_web_app(system: System, new_context: NewContext, actor: str, path: str) -> None:
    """Forgetting a memory, moving an event, snoozing and completing a reminder, ticking, editing and taking off a list
    item: each on fresh rows of the matrix, posted as the page's form or the JSON endpoint would post it."""
    family = await family_of_three(system.admin, f"Writes {path} {actor}")
    page = await signed_in(system, new_context, family, actor)
    await page.goto(base_url(system) + "/lists")
    for name, write in WRITES.items():
        if path == "form" and write.form is None:
            continue
        for row in await rows_for(system, family, actor, kinds=(write.kind,)):
            before = await system.admin.fetchval(write.state, row.id)
            url, fields = write.form if path == "form" else write.json  # type: ignore[misc]
            url = base_url(system) + url.format(id=row.id)
            if path == "form":
                response = await page.request.post(url, form={"csrf": await _csrf(page), **fields})
            else:
                response = await page.request.post(url, data=fields, headers={"X-CSRF-Token": await _csrf(page)})
            want = expected(ROLES[actor], row, answers=_answers(write, row))
            label = f"{name}: {row.label}"
            assert response.status == STATUS[want], label
            if path == "json" and want != "changed":
                assert (await response.json())["error"]["code"] in ("not_allowed", "not_found"), label
            assert (await system.admin.fetchval(write.state, row.id) != before) == (want == "changed"), label


async def test_the_toggle_makes_a_row_private_and_only_its_author_has_one(
    system: System, new_context: NewContext
) -> None:
    family = await family_of_three(system.admin, "Toggle")
    note = await call(system, family, "Alex", "store", {"content": "Gift ideas for Sam", "kind": "note"})
    alex = await signed_in(system, new_context, family, "Alex")
    await alex.goto(base_url(system) + "/memories")
    row = alex.locator(f"[data-memory='{note['memory_id']}']")
    await row.locator("select[name=audience]").select_option("hide:Sam")
    await row.locator("button.audience-set").click()
    await expect(row.locator(".badge.hidden")).to_have_text("hidden from Sam")
    sam = await signed_in(system, new_context, family, "Sam")
    await sam.goto(base_url(system) + "/memories")
    await expect(sam.locator(f"[data-memory='{note['memory_id']}']")).to_have_count(0)
    mia = await signed_in(system, new_context, family, "Mia")
    await mia.goto(base_url(system) + "/memories")
    await expect(mia.locator(f"[data-memory='{note['memory_id']}']")).to_be_visible()
    await expect(mia.locator(f"[data-memory='{note['memory_id']}'] select[name=audience]")).to_have_count(0)
    forged = await mia.request.post(
        base_url(system) + f"/visibility/memory/{note['memory_id']}",
        form={"csrf": await _csrf(mia), "audience": "household"},
    )
    assert forged.status == 403


def _places(event_id: int, reminder_id: int, item_id: int) -> tuple[tuple[str, str], ...]:
    """Where an event, a reminder and a list item are shown: (page, the row's selector on it)."""
    return (
        ("/calendar", f"[data-event='{event_id}']"),
        ("/reminders", f"[data-reminder='{reminder_id}']"),
        ("/lists", f"li[data-item='{item_id}']"),
    )


async def test_the_toggle_on_events_reminders_lists_and_items_keeps_them_from_a_member(
    system: System, new_context: NewContext
) -> None:
    """Alex keeps the household's event, reminder and list item from Sam with the toggle on each page, and makes a
    whole list hers alone: Sam's pages no longer show them, Mia's show each with its badge."""
    family = await family_of_three(system.admin, "Toggles")
    soon = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0).isoformat()
    event = await call(
        system, family, "Alex", "add_event", {"title": "Party prep", "start": soon, "whose": "household"}
    )
    reminder = await call(
        system, family, "Alex", "schedule_reminder", {"text": "Hide the gifts", "when": soon, "recipient": "household"}
    )
    listed = await call(
        system, family, "Alex", "add_list_items", {"list_name": "party", "items": [{"text": "balloons"}]}
    )
    cake = await call(system, family, "Alex", "add_list_items", {"items": [{"text": "cake"}]})
    alex = await signed_in(system, new_context, family, "Alex")

    async def choose(path: str, toggle: str, audience: str) -> None:
        """The toggle's choice made on the page: `toggle` holds it (opened first where it sits in a <details>)."""
        await alex.goto(base_url(system) + path)
        where = alex.locator(toggle)
        if await where.evaluate("element => element.tagName") == "DETAILS":
            await where.locator(":scope > summary").click()
        await where.locator("select[name=audience]").select_option(audience)
        await where.locator("button.audience-set").click()
        await alex.wait_for_load_state()

    cake_id = cake["items"][0]["item_id"]
    await choose("/calendar", f"[data-event='{event['event_id']}'] details.who-sees", "hide:Sam")
    await choose("/reminders", f"[data-reminder='{reminder['reminder_id']}'] form.audience", "hide:Sam")
    await choose("/lists", f"li[data-item='{cake_id}'] details.edit", "hide:Sam")
    await choose("/lists", f"[data-list-id='{listed['list_id']}'] > details.who-sees", "private")

    sam = await signed_in(system, new_context, family, "Sam")
    mia = await signed_in(system, new_context, family, "Mia")
    for path, selector in _places(event["event_id"], reminder["reminder_id"], cake_id):
        await sam.goto(base_url(system) + path)
        await expect(sam.locator(selector)).to_have_count(0)
        await mia.goto(base_url(system) + path)
        await expect(mia.locator(f"{selector} .badge.hidden")).to_have_text("hidden from Sam")
    for page in (sam, mia):
        await page.goto(base_url(system) + "/lists")
        await expect(page.locator(f"[data-list-id='{listed['list_id']}']")).to_have_count(0)
        await expect(page.locator("main")).not_to_contain_text("balloons")
    await alex.goto(base_url(system) + "/lists")
    await expect(alex.locator(f"[data-list-id='{listed['list_id']}'] h2 .badge.private")).to_have_count(1)


async def test_the_forms_that_make_rows_offer_who_sees_them(system: System, new_context: NewContext) -> None:
    """Alex makes an event and a reminder for herself alone and puts a ring on the list kept from Sam, with the
    forms' own choice: the rows are so in the database, Sam's pages show none of them, Mia's the ring."""
    family = await family_of_three(system.admin, "Creating")
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT10:00")
    alex = await signed_in(system, new_context, family, "Alex")
    for path, form, fields, audience in (
        ("/calendar", "#new-event", {"title": "Therapy", "start": tomorrow}, "private"),
        ("/reminders", "#new-reminder", {"text": "Take the pills", "when": tomorrow}, "private"),
        ("/lists", "#new-item", {"text": "engagement ring"}, "hide:Sam"),
    ):
        await alex.goto(base_url(system) + path)
        for name, value in fields.items():
            await alex.locator(f"{form} [name={name}]").fill(value)
        await alex.locator(f"{form} select[name=audience]").select_option(audience)
        await alex.locator(f"{form} button[type=submit]").click()
        await alex.wait_for_load_state()
    rows = await system.admin.fetch(
        """SELECT title AS what, visibility, hidden_from FROM events WHERE household_id = $1
           UNION ALL SELECT text, visibility, hidden_from FROM reminders WHERE household_id = $1
           UNION ALL SELECT text, visibility, hidden_from FROM list_items WHERE household_id = $1 ORDER BY what""",
        family.household_id,
    )
    sam_id = family.user_ids["Sam"]
    assert [tuple(r) for r in rows] == [
        ("Take the pills", "private", None),
        ("Therapy", "private", None),
        ("engagement ring", "household", sam_id),
    ]
    sam = await signed_in(system, new_context, family, "Sam")
    mia = await signed_in(system, new_context, family, "Mia")
    for path in ("/calendar", "/reminders", "/lists"):
        for page in (sam, mia):
            await page.goto(base_url(system) + path)
            await expect(page.locator("main")).not_to_contain_text("Therapy")
            await expect(page.locator("main")).not_to_contain_text("Take the pills")
    await expect(mia.locator("main")).to_contain_text("engagement ring")
    await sam.goto(base_url(system) + "/lists")
    await expect(sam.locator("main")).not_to_contain_text("engagement ring")


async def test_an_ics_upload_never_rewrites_another_members_event(system: System, new_context: NewContext) -> None:
    """Mia uploads a calendar file whose event has the UID of Sam's: Sam's event stays as it was."""
    family = await family_of_three(system.admin, "Upload")
    start = (datetime.now(UTC) + timedelta(days=4)).replace(hour=9, minute=0, second=0, microsecond=0)
    sams = await call(system, family, "Sam", "add_event", {"title": "Dentist for Mia", "start": start.isoformat(),
                                                           "whose": "household"})  # fmt: skip
    uid = await system.admin.fetchval("SELECT uid FROM events WHERE id = $1", sams["event_id"])
    forged = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nSUMMARY:Nothing happens\r\nDTSTART:{start:%Y%m%dT%H%M%SZ}\r\nDTSTAMP:20260101T000000Z\r\n"
        "SEQUENCE:5\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    mia = await signed_in(system, new_context, family, "Mia")
    await mia.goto(base_url(system) + "/calendar")
    await mia.locator("#import input[name=file]").set_input_files(
        files=[{"name": "school.ics", "mimeType": "text/calendar", "buffer": forged.encode()}]
    )
    await mia.locator("#import button[type=submit]").click()
    await expect(mia.locator("#import-note")).to_contain_text("1 kept as they are")
    row = await system.admin.fetchrow("SELECT title, updated_by FROM events WHERE id = $1", sams["event_id"])
    assert (row["title"], row["updated_by"]) == ("Dentist for Mia", None)


# The defects of issue 30 that the web app showed -------------------------------------------------------------------


async def test_a_surprise_for_sam_stays_off_his_pages_and_the_household_feed(
    system: System, new_context: NewContext
) -> None:
    family = await family_of_three(system.admin, "Surprise")
    start = (datetime.now(UTC) + timedelta(days=5)).replace(microsecond=0).isoformat()
    await call(system, family, "Alex", "store", {"content": "Planning a surprise party for Sam", "kind": "plan",
                                                 "hidden_from": "Sam"})  # fmt: skip
    await call(system, family, "Alex", "add_event", {"title": "Sam's surprise party", "start": start,
                                                     "whose": "household", "hidden_from": "Sam"})  # fmt: skip
    await call(system, family, "Mia", "store", {"content": "My locker code is 4312", "kind": "fact",
                                                "visibility": "private"})  # fmt: skip
    sam = await signed_in(system, new_context, family, "Sam")
    for path in ("/memories", "/calendar"):
        await sam.goto(base_url(system) + path)
        await expect(sam.locator("main")).not_to_contain_text("surprise")
        await expect(sam.locator("main")).not_to_contain_text("4312")
    alex = await signed_in(system, new_context, family, "Alex")
    await alex.goto(base_url(system) + "/calendar")
    await expect(alex.locator("#events")).to_contain_text("Sam's surprise party")
    await expect(alex.locator("#events .badge.hidden")).to_have_text("hidden from Sam")
    await alex.goto(base_url(system) + "/memories")
    await expect(alex.locator("main")).not_to_contain_text("4312")

    async with system.deps.db.household(family.household_id) as conn:
        household_feed = await feeds.token(conn, family.household_id, None)
        alex_feed = await feeds.token(conn, family.household_id, family.user_ids["Alex"])
        sam_feed = await feeds.token(conn, family.household_id, family.user_ids["Sam"])
    for token, party in ((household_feed, False), (sam_feed, False), (alex_feed, True)):
        body = await (await system.client.get(f"/ics/{token}.ics")).text()
        assert ("surprise party" in body) == party


async def test_a_child_cannot_change_an_adults_expense_and_every_change_says_who_made_it(
    system: System, new_context: NewContext
) -> None:
    family = await family_of_three(system.admin, "Expense")
    expense = await call(system, family, "Sam", "store", {"content": "Groceries at Rewe", "kind": "expense",
                                                          "amount": "26.00", "currency": "EUR"})  # fmt: skip
    mia = await signed_in(system, new_context, family, "Mia")
    await mia.goto(base_url(system) + "/memories")
    refused = await mia.request.post(
        base_url(system) + f"/memories/{expense['memory_id']}/edit",
        form={"csrf": await _csrf(mia), "content": "Groceries at Rewe", "amount": "26.50", "currency": "EUR"},
    )
    assert refused.status == 403
    assert "take ids" not in await refused.text() and "memory_id" not in await refused.text()
    assert str(await system.admin.fetchval("SELECT amount FROM memories WHERE id = $1", expense["memory_id"])) == (
        "26.00"
    )
    alex = await signed_in(system, new_context, family, "Alex")
    await alex.goto(base_url(system) + "/memories")
    row = alex.locator(f"[data-memory='{expense['memory_id']}']")
    await row.locator("summary").first.click()
    await row.locator("input[name=amount]").fill("26.50")
    await row.locator("form.stack button").click()
    await expect(alex.locator(f"[data-memory='{expense['memory_id']}'] .edited")).to_have_text("edited by Alex")
    changed_by = await system.admin.fetchval("SELECT updated_by FROM memories WHERE id = $1", expense["memory_id"])
    assert changed_by == family.user_ids["Alex"]


async def test_an_event_a_reminder_and_a_list_item_say_who_changed_them(
    system: System, new_context: NewContext
) -> None:
    family = await family_of_three(system.admin, "Edited by")
    soon = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
    event = await call(system, family, "Alex", "add_event", {"title": "Dinner", "start": soon.isoformat(),
                                                             "whose": "household"})  # fmt: skip
    reminder = await call(system, family, "Alex", "schedule_reminder", {"text": "Bins", "when": soon.isoformat(),
                                                                        "recipient": "household"})  # fmt: skip
    item = (await call(system, family, "Alex", "add_list_items", {"items": [{"text": "milk"}]}))["items"][0]
    sam = await signed_in(system, new_context, family, "Sam")
    await sam.goto(base_url(system) + "/lists")
    csrf = {"X-CSRF-Token": await _csrf(sam)}
    later = (soon + timedelta(hours=1)).isoformat()
    for path, body in (
        (f"/app/events/{event['event_id']}/move", {"start": later}),
        (f"/app/reminders/{reminder['reminder_id']}/snooze", {"minutes": 30}),
        (f"/app/lists/items/{item['item_id']}", {"quantity": "2"}),
    ):
        assert (await sam.request.post(base_url(system) + path, data=body, headers=csrf)).status == 200, path
    alex = await signed_in(system, new_context, family, "Alex")
    for path, selector in _places(event["event_id"], reminder["reminder_id"], item["item_id"]):
        await alex.goto(base_url(system) + path)
        await expect(alex.locator(f"{selector} .edited")).to_have_text("edited by Sam")


async def test_sign_in_attempts_are_limited_per_client_and_per_code(system: System, new_context: NewContext) -> None:
    context = await new_context()
    page = await context.new_page()
    await page.goto(base_url(system) + "/login")
    csrf = await page.locator("input[name=csrf]").get_attribute("value") or ""
    limit = system.deps.settings.web.login_attempts_per_client
    statuses = []
    for attempt in range(limit + 3):
        response = await page.request.post(base_url(system) + "/login", form={"csrf": csrf, "code": f"WRONG{attempt}"})
        statuses.append(response.status)
        if response.status == 429:
            assert 0 < int(response.headers["retry-after"]) <= system.deps.settings.web.login_window_s
    assert statuses == [400] * limit + [429] * 3

    other = await (await new_context()).new_page()  # another client trying one code again and again
    await other.goto(base_url(system) + "/login")
    for _ in range(system.deps.settings.web.login_attempts_per_code + 1):
        await other.fill("input[name=code]", "SAME-CODE")
        async with other.expect_navigation():  # each attempt answered before the next: a click while the last
            await other.locator("button[type=submit]").click()  # page loads could cancel its request
    await expect(other.locator("#limited")).to_be_visible()


async def test_json_endpoints_answer_json_errors(system: System, new_context: NewContext) -> None:
    family = await family_of_three(system.admin, "Json errors")
    anonymous = await (await new_context()).new_page()
    unsigned = await anonymous.request.get(base_url(system) + "/app/lists")
    assert unsigned.status == 401 and (await unsigned.json())["error"]["code"] == "sign_in_first"
    mia = await signed_in(system, new_context, family, "Mia")
    await mia.goto(base_url(system) + "/lists")
    no_csrf = await mia.request.post(base_url(system) + "/app/lists/items", data={"items": []})
    assert no_csrf.status == 403 and (await no_csrf.json())["error"]["code"] == "csrf_check_failed"
    not_json = await mia.request.post(
        base_url(system) + "/app/budgets", data="{", headers={"X-CSRF-Token": await _csrf(mia)}
    )
    assert not_json.status == 400 and "error" in await not_json.json()
    child = await mia.request.post(
        base_url(system) + "/app/budgets",
        data={"category": "groceries", "amount": "1", "currency": "EUR"},
        headers={"X-CSRF-Token": await _csrf(mia)},
    )
    assert child.status == 403 and (await child.json())["error"]["code"] == "not_allowed"


async def test_a_write_to_another_households_member_answers_404(system: System, new_context: NewContext) -> None:
    ours = await family_of_three(system.admin, "Ours")
    theirs = await make_family(system.admin, "Theirs", {"Olga": "Europe/Berlin"})
    sam = await signed_in(system, new_context, ours, "Sam")
    await sam.goto(base_url(system) + "/household")
    olga = theirs.user_ids["Olga"]
    for path, form in (
        (f"/household/members/{olga}", {"timezone": "UTC", "locale": "en", "role": "child"}),
        (f"/household/members/{olga}/rename", {"name": "Hacked"}),
        (f"/household/members/{olga}/remove", {"confirm": "Olga"}),
        (f"/household/members/{olga}/invite", {}),
    ):
        response = await sam.request.post(base_url(system) + path, form={"csrf": await _csrf(sam), **form})
        assert response.status == 404, path
    assert await system.admin.fetchrow("SELECT name, role FROM users WHERE id = $1", olga) == ("Olga", "adult")


async def test_the_owner_manages_members_on_the_household_page(system: System, new_context: NewContext) -> None:
    family = await family_of_three(system.admin, "Managing")
    alex = await signed_in(system, new_context, family, "Alex")
    await alex.goto(base_url(system) + "/household")
    await expect(alex.locator("form.rename")).to_have_count(0)
    forged = await alex.request.post(
        base_url(system) + f"/household/members/{family.user_ids['Mia']}/rename",
        form={"csrf": await _csrf(alex), "name": "Mila"},
    )
    assert forged.status == 403

    sam = await signed_in(system, new_context, family, "Sam")
    await sam.goto(base_url(system) + "/household")
    mia = sam.locator("[data-member='Mia']")
    await mia.locator("summary").click()
    await mia.locator("form.rename input[name=name]").fill("Mila")
    await mia.locator("form.rename button").click()
    await expect(sam.locator("[data-member='Mila']")).to_be_visible()
    mila = sam.locator("[data-member='Mila']")
    await mila.locator("summary").click()
    await mila.locator("select[name=role]").select_option("adult")
    await mila.locator("details form.stack button[type=submit]").first.click()
    await expect(sam.locator("[data-member='Mila'] .badge")).to_have_text("adult")
    await call(system, family, "Mia", "store", {"content": "Mila's secret", "kind": "note", "visibility": "private"})
    mila = sam.locator("[data-member='Mila']")
    await mila.locator("summary").click()
    await mila.locator("form.remove input[name=confirm]").fill("Mila")
    await mila.locator("form.remove button").click()
    await expect(sam.locator("[data-member='Mila']")).to_have_count(0)
    assert await system.admin.fetchval(
        "SELECT count(*) FROM memories WHERE household_id = $1 AND content = 'Mila''s secret'", family.household_id
    ) == 0  # fmt: skip


async def test_the_models_hints_never_reach_a_page(system: System, new_context: NewContext) -> None:
    family = await family_of_three(system.admin, "Hints")
    page = await signed_in(system, new_context, family, "Alex")
    await page.goto(base_url(system) + "/lists")
    for path, fields in (("/lists/items/999999999/tick", {"done": "1"}), ("/reminders/999999999/cancel", {})):
        response = await page.request.post(base_url(system) + path, form={"csrf": await _csrf(page), **fields})
        text = await response.text()
        assert response.status == 404, path
        assert not re.search(r"show_list|list_reminders|take ids|reminder_ids", text), path


async def test_the_rows_of_every_kind_carry_their_badges(system: System, new_context: NewContext) -> None:
    family = await family_of_three(system.admin, "Badges")
    rows = await rows_for(system, family, "Alex")
    page = await signed_in(system, new_context, family, "Alex")
    for kind in KINDS:
        await page.goto(base_url(system) + PAGES[kind])
        for row in (r for r in rows if r.kind == kind and r.owner == "own"):
            item = page.locator(SELECTORS[kind].format(id=row.id))
            await expect(item.locator(".badge.private")).to_have_count(1 if row.visibility == "private" else 0)
            await expect(item.locator("select[name=audience]")).to_have_count(1)
