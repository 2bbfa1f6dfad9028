"""Turning push on in the web app: the reminders page's switch subscribes the browser with the household's VAPID key
and posts the subscription with the CSRF token; the worker then pushes a reminder to it once the page is closed, and
the service worker shows a push as a notification. Headless Chromium has no push service of its own (Chrome's is
Google's), so the browser's PushManager hands out a subscription of the push service on loopback instead."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import asyncpg
import pytest
from aiohttp import web
from playwright.async_api import BrowserContext, expect

from bot.channels.live import Presence
from bot.web.pages.notifications import KEEP_ALIVE_S
from bot.web.server import web_runner
from engine.channel_settings import WebPushSettings
from engine.settings import Settings
from tests.bot.web.pages.conftest import base_url, signed_in
from tests.bot.web.pages.test_calendar import session
from tests.bot.web.pages.test_live import remind
from tests.fakes.clock import ManualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.push_service import FakePushService, Subscriber
from tests.system import Family, System, eventually, make_family, running_system
from tools.infra import vapid


@pytest.fixture
async def clock() -> ManualClock:
    return ManualClock((datetime.now(UTC) + timedelta(minutes=1)).replace(second=0, microsecond=0))


@pytest.fixture
async def pushing(
    settings: Settings,
    fake_llm: FakeOpenAI,
    admin_conn: asyncpg.Connection,
    clock: ManualClock,
    push_service: FakePushService,
) -> AsyncIterator[System]:
    configured = settings.model_copy(update={"webpush": WebPushSettings(services=[f"{push_service.base_url}/push/"])})
    async with running_system(configured, fake_llm, admin_conn, clock=clock) as system:
        yield system
    await admin_conn.execute("UPDATE reminders SET status = 'cancelled', next_fire_at = NULL WHERE status = 'active'")


def subscription(service: FakePushService, browser: Subscriber) -> dict[str, Any]:
    """PushSubscription.toJSON() of a browser subscribed with the push service on loopback."""
    return {
        "endpoint": service.endpoint(browser),
        "expirationTime": None,
        "keys": {"p256dh": browser.p256dh, "auth": vapid.b64url(browser.auth)},
    }


async def stored(admin: asyncpg.Connection, family: Family) -> list[tuple[int, str]]:
    rows = await admin.fetch(
        "SELECT user_id, endpoint FROM push_subscriptions WHERE household_id = $1 ORDER BY id", family.household_id
    )
    return [(row["user_id"], row["endpoint"]) for row in rows]


async def test_a_member_turns_push_on_and_off_for_a_browser(pushing: System, push_service: FakePushService) -> None:
    family = await make_family(pushing.admin, "Switch", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    other = await make_family(pushing.admin, "Elsewhere", {"Cleo": "Europe/Berlin"})
    anna, ben, cleo = (
        await session(pushing, family, "Anna"),
        await session(pushing, family, "Ben"),
        await session(pushing, other, "Cleo"),
    )
    browser = push_service.subscriber(f"switch-{family.household_id}")
    body = subscription(push_service, browser)
    client = pushing.client

    made = await pushing.admin.fetchval("SELECT vapid_private_key FROM households WHERE id = $1", family.household_id)
    assert len(made) == 32  # made with the household
    # A household made before push existed gets its key when the web app first offers push.
    await pushing.admin.execute("UPDATE households SET vapid_private_key = NULL WHERE id = $1", family.household_id)
    page = await (await client.get("/reminders", headers=anna)).text()
    key = await pushing.admin.fetchval("SELECT vapid_private_key FROM households WHERE id = $1", family.household_id)
    assert len(key) == 32 and key != made
    assert f'data-key="{vapid.public_key(key)}"' in page  # the key the browser subscribes with
    assert f'data-key="{vapid.public_key(key)}"' in await (await client.get("/reminders", headers=ben)).text()

    no_csrf = {"Cookie": anna["Cookie"]}
    assert (await client.post("/app/push", json=body, headers=no_csrf)).status == 403
    elsewhere = {**body, "endpoint": "https://push.evil.example/push/x"}
    refused = await client.post("/app/push", json=elsewhere, headers=anna)
    assert refused.status == 400 and (await refused.json())["error"]["code"] == "invalid"
    bad_key = {**body, "keys": {"p256dh": "AAAA", "auth": body["keys"]["auth"]}}
    assert (await client.post("/app/push", json=bad_key, headers=anna)).status == 400
    assert await stored(pushing.admin, family) == []

    renew = {**body, "renew": True}  # a page checking in on load
    assert await (await client.post("/app/push", json=renew, headers=anna)).json() == {"push": False}
    assert await stored(pushing.admin, family) == []  # checking in turns nothing on

    assert await (await client.post("/app/push", json=body, headers=anna)).json() == {"push": True}
    assert await stored(pushing.admin, family) == [(family.user_ids["Anna"], body["endpoint"])]
    assert await (await client.post("/app/push", json=renew, headers=anna)).json() == {"push": True}
    # Ben signs in on the same browser: it stays Anna's until he turns it on; then it notifies him instead.
    assert await (await client.post("/app/push", json=renew, headers=ben)).json() == {"push": False}
    assert await stored(pushing.admin, family) == [(family.user_ids["Anna"], body["endpoint"])]
    assert (await client.post("/app/push", json=body, headers=ben)).status == 200
    assert await stored(pushing.admin, family) == [(family.user_ids["Ben"], body["endpoint"])]
    # Another household knows the same browser apart: its row is its own, under row-level security.
    assert (await client.post("/app/push", json=body, headers=cleo)).status == 200
    assert await stored(pushing.admin, other) == [(other.user_ids["Cleo"], body["endpoint"])]

    assert (await client.post("/app/push/remove", json={"endpoint": body["endpoint"]}, headers=anna)).status == 200
    assert await stored(pushing.admin, family) == [(family.user_ids["Ben"], body["endpoint"])]  # not Anna's to end
    assert (await client.post("/app/push/remove", json={"endpoint": body["endpoint"]}, headers=ben)).status == 200
    assert await stored(pushing.admin, family) == []
    assert await stored(pushing.admin, other) == [(other.user_ids["Cleo"], body["endpoint"])]


async def test_a_subscription_the_push_service_replaced_stays_with_the_member_who_turned_push_on(
    pushing: System, push_service: FakePushService
) -> None:
    """The service worker's `pushsubscriptionchange`: it reads the key and the CSRF token, subscribes again and posts
    the new subscription with the endpoint it replaces. In a browser members share, the one signed in when it fires
    need not be the one who turned push on there: the new subscription is still that member's, and only theirs."""
    family = await make_family(pushing.admin, "Rotate", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    other = await make_family(pushing.admin, "Beside", {"Cleo": "Europe/Berlin"})
    anna, ben, cleo = (
        await session(pushing, family, "Anna"),
        await session(pushing, family, "Ben"),
        await session(pushing, other, "Cleo"),
    )
    old, new, newer, bens = (
        subscription(push_service, push_service.subscriber(f"{name}-{family.household_id}"))
        for name in ("old", "new", "newer", "bens")
    )
    client = pushing.client
    assert (await client.post("/app/push", json=old, headers=anna)).status == 200  # the browser they share
    assert (await client.post("/app/push", json=bens, headers=ben)).status == 200
    assert (await client.post("/app/push", json=old, headers=cleo)).status == 200  # another household's, the same
    anna_row = await pushing.admin.fetchval(
        "SELECT id FROM push_subscriptions WHERE user_id = $1", family.user_ids["Anna"]
    )

    assert (await client.get("/app/push")).status == 401  # signed out: the worker leaves it
    given = await (await client.get("/app/push", headers={"Cookie": ben["Cookie"]})).json()
    key = await pushing.admin.fetchval("SELECT vapid_private_key FROM households WHERE id = $1", family.household_id)
    assert given == {"key": vapid.public_key(key), "csrf": ben["X-CSRF-Token"]}

    changed = {**new, "replaces": old["endpoint"]}
    assert (await client.post("/app/push", json=changed, headers={"Cookie": ben["Cookie"]})).status == 403
    # Ben is signed in when the push service replaces the subscription of the browser Anna turned push on in.
    assert await (await client.post("/app/push", json=changed, headers=ben)).json() == {"push": False}
    assert await stored(pushing.admin, family) == [
        (family.user_ids["Anna"], new["endpoint"]),
        (family.user_ids["Ben"], bens["endpoint"]),
    ]
    keys = await pushing.admin.fetchrow(
        "SELECT id, p256dh, auth FROM push_subscriptions WHERE endpoint = $1", new["endpoint"]
    )
    assert tuple(keys) == (anna_row, new["keys"]["p256dh"], new["keys"]["auth"])  # pushes queued for it follow
    assert await stored(pushing.admin, other) == [(other.user_ids["Cleo"], old["endpoint"])]  # not this household's
    # Signed in herself, Anna hears that it is on for her.
    again = {**newer, "replaces": new["endpoint"]}
    assert await (await client.post("/app/push", json=again, headers=anna)).json() == {"push": True}
    assert await stored(pushing.admin, family) == [
        (family.user_ids["Anna"], newer["endpoint"]),
        (family.user_ids["Ben"], bens["endpoint"]),
    ]

    # A subscription the household does not know, or none named, turns nothing on for whoever is signed in.
    for unknown in ({**new, "replaces": old["endpoint"]}, {**new, "replaces": None}):
        assert await (await client.post("/app/push", json=unknown, headers=ben)).json() == {"push": False}
    assert await stored(pushing.admin, family) == [
        (family.user_ids["Anna"], newer["endpoint"]),
        (family.user_ids["Ben"], bens["endpoint"]),
    ]
    assert await stored(pushing.admin, other) == [(other.user_ids["Cleo"], old["endpoint"])]


async def test_a_closed_page_stops_counting_as_open_within_seconds(pushing: System) -> None:
    """As `faa serve` runs it, aiohttp tells a handler of a lost connection only when it next writes (the keep-alive
    every 25 s): the event stream must notice sooner, or a reminder fired meanwhile would be pushed to nobody."""
    family = await make_family(pushing.admin, "Closing", {"Anna": "Europe/Berlin"})
    anna = await session(pushing, family, "Anna")
    runner = web_runner(pushing.deps)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    presence = Presence(pushing.redis)
    try:
        async with aiohttp.ClientSession() as client:
            async with client.get(f"http://127.0.0.1:{port}/app/events", headers={"Cookie": anna["Cookie"]}) as stream:
                assert stream.status == 200
                await eventually(lambda: presence.any_open(family.user_ids["Anna"]), timeout_s=5)
        # Well before the keep-alive (25 s after the stream opened) would have told.
        await eventually(lambda: _closed(pushing, family), timeout_s=KEEP_ALIVE_S - 15)
    finally:
        await runner.cleanup()


# The browser's PushManager, handing out a subscription of the push service on loopback (recording the key it was
# asked to subscribe with), as Chrome's would of Google's.
FAKE_PUSH_MANAGER = """
(() => {
  const fake = %s;
  let current = null;
  PushManager.prototype.getSubscription = function () { return Promise.resolve(current); };
  PushManager.prototype.subscribe = function (options) {
    window.subscribedWith = btoa(String.fromCharCode(...new Uint8Array(options.applicationServerKey)));
    current = {
      endpoint: fake.endpoint,
      toJSON: () => fake,
      unsubscribe: () => { current = null; return Promise.resolve(true); },
    };
    return Promise.resolve(current);
  };
})();
"""


async def test_push_on_in_chromium_then_a_reminder_reaches_the_closed_app_and_the_service_worker_shows_it(
    pushing: System,
    clock: ManualClock,
    push_service: FakePushService,
    new_context: Callable[[], Awaitable[BrowserContext]],
) -> None:
    family = await make_family(pushing.admin, "Phone", {"Anna": "Europe/Berlin"})
    browser = push_service.subscriber(f"chromium-{family.household_id}")
    page = await signed_in(pushing, new_context, family, "Anna")
    await page.context.grant_permissions(["notifications"], origin=base_url(pushing))
    await page.add_init_script(FAKE_PUSH_MANAGER % json.dumps(subscription(push_service, browser)))
    await page.goto(base_url(pushing) + "/reminders")

    card = page.locator("#push")
    await expect(card).to_be_visible()
    await expect(page.locator("#push-state")).to_have_text("Off for this device.")
    await card.get_by_role("button", name="Turn on for this device").click()
    await expect(page.locator("#push-state")).to_have_text("On: this device is notified while FAA is closed.")
    assert await stored(pushing.admin, family) == [(family.user_ids["Anna"], push_service.endpoint(browser))]
    await card.get_by_role("button", name="Turn off for this device").click()
    await expect(page.locator("#push-state")).to_have_text("Off for this device.")
    assert await stored(pushing.admin, family) == []
    await card.get_by_role("button", name="Turn on for this device").click()
    await expect(card).to_have_attribute("data-state", "on")
    assert await stored(pushing.admin, family) == [(family.user_ids["Anna"], push_service.endpoint(browser))]
    key = await pushing.admin.fetchval("SELECT vapid_private_key FROM households WHERE id = $1", family.household_id)
    subscribed_with = base64.b64decode(await page.evaluate("window.subscribedWith"))
    assert vapid.b64url(subscribed_with) == vapid.public_key(key)

    # The service worker shows a push as the browser hands it over (DevTools' "push" of the real message body).
    cdp = await page.context.new_cdp_session(page)
    registrations: list[dict[str, Any]] = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda event: registrations.extend(event["registrations"]))
    await cdp.send("ServiceWorker.enable")
    registration = await eventually(lambda: _first(registrations))
    # A push handed to a worker still installing is dropped: on a loaded machine activation takes seconds.
    await eventually(lambda: page.evaluate("navigator.serviceWorker.ready.then((r) => r.active.state === 'activated')"))
    note = {"title": "FAA", "body": "Reminder: Feed the cat", "tag": "faa-1", "url": "/reminders"}
    await cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": base_url(pushing), "registrationId": registration["registrationId"], "data": json.dumps(note)},
    )
    shown = await eventually(
        lambda: page.evaluate(
            """navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((notes) =>
                 notes.map((n) => [n.title, n.body, n.tag, n.data.url]))"""
        )
    )
    assert shown == [["FAA", "Reminder: Feed the cat", "faa-1", "/reminders"]]

    await page.close()  # the app is closed: within seconds it no longer counts as open, and a reminder is pushed
    await eventually(lambda: _closed(pushing, family), timeout_s=5)
    await remind(pushing, family, clock, "Take the cake out of the oven")
    [received] = await eventually(lambda: _arrived(push_service, browser))
    assert received.payload["body"] == "Reminder: Take the cake out of the oven"
    assert received.payload["url"] == "/reminders"


# In the service worker: the push service on loopback stands in for Chrome's (as FAKE_PUSH_MANAGER does in the page)
# and hands out the browser's next subscription, then `pushsubscriptionchange` reaches the worker's own listener.
# Chromium neither fires the event nor lets DevTools fire it, and `waitUntil` of an event made by a script throws, so
# the event carries its own `waitUntil`, which collects what the listener waits on and is awaited here.
SUBSCRIPTION_CHANGES = """
async ([replaced, next]) => {
  let subscribedWith = null;
  PushManager.prototype.subscribe = function (options) {
    subscribedWith = options.applicationServerKey;
    return Promise.resolve({ endpoint: next.endpoint, toJSON: () => next });
  };
  const waited = [];
  const event = new Event("pushsubscriptionchange");
  Object.defineProperties(event, {
    oldSubscription: { value: { endpoint: replaced.endpoint, toJSON: () => replaced } },
    newSubscription: { value: null },
    waitUntil: { value: (promise) => waited.push(promise) },
  });
  self.dispatchEvent(event);
  await Promise.all(waited);
  return { listeners: waited.length, subscribedWith };
}
"""


async def test_the_service_worker_subscribes_again_when_the_browser_replaces_the_subscription_and_pushes_follow(
    pushing: System,
    clock: ManualClock,
    push_service: FakePushService,
    new_context: Callable[[], Awaitable[BrowserContext]],
) -> None:
    """Anna turns push on in the browser she shares with Ben; Ben is signed in there when the push service replaces
    its subscription. The new one is Anna's: her reminders keep reaching that browser, and Ben is not signed up."""
    family = await make_family(pushing.admin, "Renewed", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    before = push_service.subscriber(f"before-{family.household_id}")
    after = push_service.subscriber(f"after-{family.household_id}")
    page = await signed_in(pushing, new_context, family, "Anna")
    await page.context.grant_permissions(["notifications"], origin=base_url(pushing))
    await page.add_init_script(FAKE_PUSH_MANAGER % json.dumps(subscription(push_service, before)))
    await page.goto(base_url(pushing) + "/reminders")
    await page.get_by_role("button", name="Turn on for this device").click()
    await expect(page.locator("#push")).to_have_attribute("data-state", "on")
    assert await stored(pushing.admin, family) == [(family.user_ids["Anna"], push_service.endpoint(before))]

    # Ben signs in on the same browser: push is Anna's there, not his.
    ben = (await session(pushing, family, "Ben"))["Cookie"].removeprefix("faa_session=")
    await page.context.add_cookies([{"name": "faa_session", "value": ben, "url": base_url(pushing)}])
    await page.goto(base_url(pushing) + "/reminders")
    await expect(page.locator("#push-state")).to_have_text("Off for this device.")

    await page.evaluate("navigator.serviceWorker.ready")
    [worker] = page.context.service_workers
    changed = await worker.evaluate(
        SUBSCRIPTION_CHANGES, [subscription(push_service, before), subscription(push_service, after)]
    )
    key = await pushing.admin.fetchval("SELECT vapid_private_key FROM households WHERE id = $1", family.household_id)
    assert changed == {"listeners": 1, "subscribedWith": vapid.public_key(key)}
    # The new endpoint is Anna's, in place of the old one: nothing is sent to a subscription that no longer exists,
    # and Ben's reminders do not reach the browser Anna turned push on in.
    assert await stored(pushing.admin, family) == [(family.user_ids["Anna"], push_service.endpoint(after))]

    await page.close()
    await eventually(lambda: _closed(pushing, family), timeout_s=5)
    await remind(pushing, family, clock, "Water the tomatoes")
    [received] = await eventually(lambda: _arrived(push_service, after))
    assert received.payload["body"] == "Reminder: Water the tomatoes"
    assert received.status == 201
    assert push_service.to(before) == []


async def _first(registrations: list[dict[str, Any]]) -> dict[str, Any] | None:
    active = [r for r in registrations if not r.get("isDeleted")]
    return active[0] if active else None


async def _closed(system: System, family: Family) -> bool:
    return not await Presence(system.redis).any_open(family.user_ids["Anna"])


async def _arrived(service: FakePushService, browser: Subscriber) -> list[Any]:
    return service.to(browser)
