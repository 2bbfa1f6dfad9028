"""Web Push against a push service on loopback: what the web app delivers to a member with no page open reaches each
browser they turned push on in once, signed with the household's VAPID key and decrypted by the browser's key;
never while a page is open, held back by quiet hours, saying on the lock screen only what may be seen there; a
subscription the service dropped is removed, other failures retry."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from bot.channels.live import LiveReplySender, Presence
from bot.channels.webpush import endpoints
from bot.channels.webpush.sender import WebPushSender
from engine.channel_settings import WebPushSettings
from engine.deps import Deps
from engine.settings import Settings
from tests.fakes.clock import ManualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.push_service import FakePushService, Subscriber
from tests.system import Family, System, accept_unqueued, make_family, running_system
from tools.infra import vapid
from tools.storage import outbox, push
from tools.storage import reminders as stored_reminders
from tools.storage.forgetting import forget_member
from tools.storage.visibility import Audience
from worker import delivery
from worker.jobs import sweep_reminders


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


@pytest.fixture
def clock() -> ManualClock:
    # In the future of the real clock: a held-back push's job is deferred on it.
    return ManualClock(utc(2040, 1, 10, 12))


@pytest.fixture
async def system(
    settings: Settings,
    fake_llm: FakeOpenAI,
    admin_conn: asyncpg.Connection,
    clock: ManualClock,
    push_service: FakePushService,
) -> AsyncIterator[System]:
    push_service.answers.clear()
    pushing = settings.model_copy(update={"webpush": WebPushSettings(services=[f"{push_service.base_url}/push/"])})
    async with running_system(pushing, fake_llm, admin_conn, worker=False, clock=clock) as running:
        yield running
    await admin_conn.execute("UPDATE reminders SET status = 'cancelled', next_fire_at = NULL WHERE status = 'active'")


@pytest.fixture
async def deps(system: System) -> AsyncIterator[Deps]:
    """The worker's dependencies with the web app's live sender and the push sender."""
    sender = WebPushSender(system.deps)
    live = LiveReplySender(system.redis)
    yield dataclasses.replace(system.deps, senders={"web": live, "webpush": sender})
    await sender.close()


async def turn_on(deps: Deps, family: Family, member: str, service: FakePushService, name: str) -> Subscriber:
    """The member turns push on in a browser (as the web app's switch posts it)."""
    browser = service.subscriber(f"{name}-{family.household_id}")
    async with deps.db.household(family.household_id, family.user_ids[member]) as conn:
        await push.subscribe(
            conn,
            family.household_id,
            family.user_ids[member],
            service.endpoint(browser),
            browser.p256dh,
            vapid.b64url(browser.auth),
        )
    return browser


async def reply_row(deps: Deps, family: Family, member: str, external_id: str, text: str) -> int:
    """FAA's reply to a message the member sent from the web app, waiting for delivery."""
    message = await accept_unqueued(deps, family, member, external_id, "what is on today?")
    async with deps.db.household(family.household_id) as conn:
        outbox_id = await outbox.add(
            conn,
            household_id=family.household_id,
            user_id=family.user_ids[member],
            channel="web",
            recipient=str(family.user_ids[member]),
            text=text,
            inbox_id=message.id,
        )
    assert outbox_id is not None
    return outbox_id


async def pushes_of(admin: asyncpg.Connection, source_id: int) -> list[asyncpg.Record]:
    return await admin.fetch("SELECT * FROM outbox WHERE source_id = $1 ORDER BY id", source_id)


async def fire(deps: Deps, family: Family, clock: ManualClock, author: str, text: str, **kwargs: Any) -> int:
    """A reminder set by `author` for Anna, fired by the sweeper; the id of Anna's web row."""
    anna, due = family.user_ids["Anna"], clock.now() + timedelta(minutes=1)
    async with deps.db.household(family.household_id, family.user_ids[author]) as conn:
        row = await stored_reminders.insert(
            conn, household_id=family.household_id, created_by=family.user_ids[author], recipient_ids=[anna],
            text=text, timezone="Europe/Berlin", rrule=None, first_fire_at=due, dtstart_local=due.replace(tzinfo=None),
            for_household=False, source_inbox_id=None, **kwargs,
        )  # fmt: skip
    clock.set(due)
    assert (await sweep_reminders({"deps": deps}))["fired"] >= 1
    async with deps.db.household(family.household_id) as conn:
        web_id = await conn.fetchval(
            "SELECT id FROM outbox WHERE (payload->>'reminder_id')::bigint = $1 AND user_id = $2 AND channel = 'web'",
            int(row["id"]),
            anna,
        )
    return int(web_id)


async def test_a_reminder_for_a_member_with_no_page_open_is_pushed_once_signed_and_encrypted(
    system: System, deps: Deps, clock: ManualClock, push_service: FakePushService
) -> None:
    family = await make_family(system.admin, "Push", {"Anna": "Europe/Berlin"})
    phone = await turn_on(deps, family, "Anna", push_service, "phone")

    web_id = await fire(deps, family, clock, "Anna", "Take the cake out of the oven")

    [queued] = await pushes_of(system.admin, web_id)
    assert (queued["channel"], queued["status"], queued["user_id"]) == ("webpush", "pending", family.user_ids["Anna"])
    assert await system.redis.zscore("arq:queue", f"outbox:{queued['id']}:0") is not None  # its delivery job
    assert await delivery.deliver(deps, queued["id"], family.household_id) == "sent"

    [received] = push_service.to(phone)
    assert received.payload == {
        "title": "FAA",
        "body": "Reminder: Take the cake out of the oven",
        "tag": f"faa-{web_id}",  # the open page's Notification API uses the same tag for this row
        "url": "/reminders",
    }
    key = await system.admin.fetchval("SELECT vapid_private_key FROM households WHERE id = $1", family.household_id)
    assert received.vapid_key == vapid.public_key(key)  # signed with the household's key (checked by the service)
    assert received.claims["sub"] == "mailto:faa@localhost"
    assert received.headers == {"TTL": "86400", "Topic": f"faa-{web_id}", "Urgency": "normal"}

    # Exactly once: the push row is not sent twice, and the web row sent again (its process died before it was
    # recorded) queues no second push.
    assert await delivery.deliver(deps, queued["id"], family.household_id) == "nothing to deliver"
    await system.admin.execute("UPDATE outbox SET status = 'pending' WHERE id = $1", web_id)
    assert await delivery.deliver(deps, web_id, family.household_id) == "sent"
    assert [row["id"] for row in await pushes_of(system.admin, web_id)] == [queued["id"]]
    assert len(push_service.to(phone)) == 1

    # The push is not a second entry in the member's notification feed.
    async with deps.db.household(family.household_id, family.user_ids["Anna"]) as conn:
        feed = await outbox.notifications(conn, family.user_ids["Anna"])
    assert [row.id for row in feed] == [web_id]


async def test_every_browser_gets_one_push_and_none_goes_out_while_a_page_is_open(
    system: System, deps: Deps, push_service: FakePushService
) -> None:
    family = await make_family(system.admin, "Pages", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    phone = await turn_on(deps, family, "Anna", push_service, "phone")
    laptop = await turn_on(deps, family, "Anna", push_service, "laptop")
    bens = await turn_on(deps, family, "Ben", push_service, "bens")

    presence = Presence(system.redis)
    await presence.mark(family.user_ids["Anna"], "chat-tab")
    seen = await reply_row(deps, family, "Anna", "open-1", "Nothing is on today.")
    assert await delivery.deliver(deps, seen, family.household_id) == "sent"
    assert await pushes_of(system.admin, seen) == []  # the open page shows it

    await presence.unmark(family.user_ids["Anna"], "chat-tab")
    away = await reply_row(deps, family, "Anna", "closed-1", "The dentist is at 3.")
    assert await delivery.deliver(deps, away, family.household_id) == "sent"
    queued = await pushes_of(system.admin, away)
    assert len(queued) == 2
    for row in queued:
        assert await delivery.deliver(deps, row["id"], family.household_id) == "sent"
    for browser in (phone, laptop):
        [received] = push_service.to(browser)
        assert received.payload == {"title": "FAA", "body": "FAA replied", "tag": f"faa-{away}", "url": "/"}
    assert push_service.to(bens) == []  # another member's browser


async def test_quiet_hours_hold_the_push_until_they_end(
    system: System, deps: Deps, clock: ManualClock, push_service: FakePushService
) -> None:
    family = await make_family(system.admin, "Night", {"Anna": "Europe/Berlin"})
    await system.admin.execute(
        "UPDATE users SET quiet_start = '22:00', quiet_end = '07:00' WHERE id = $1", family.user_ids["Anna"]
    )
    phone = await turn_on(deps, family, "Anna", push_service, "night-phone")
    clock.set(utc(2040, 1, 10, 22, 30))  # 23:30 in Berlin

    reply = await reply_row(deps, family, "Anna", "late-1", "Noted.")
    assert await delivery.deliver(deps, reply, family.household_id) == "sent"  # to the web app's feed at once
    [held] = await pushes_of(system.admin, reply)
    assert held["status"] == "pending" and held["next_attempt_at"] == utc(2040, 1, 11, 6)  # 07:00 in Berlin
    job = await system.redis.zscore("arq:queue", f"outbox:{held['id']}:0")
    assert job == utc(2040, 1, 11, 6).timestamp() * 1000  # the delivery job waits for the end of the quiet hours
    assert push_service.to(phone) == []

    clock.set(utc(2040, 1, 11, 6))
    assert await delivery.deliver(deps, held["id"], family.household_id) == "sent"
    assert [r.payload["body"] for r in push_service.to(phone)] == ["FAA replied"]


async def test_a_lock_screen_shows_only_the_members_own_household_reminder(
    system: System, deps: Deps, clock: ManualClock, push_service: FakePushService
) -> None:
    family = await make_family(system.admin, "Lock", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    await turn_on(deps, family, "Anna", push_service, "lock-phone")
    ben = family.user_ids["Ben"]
    cases = [
        ("Anna", "Call grandma about Sunday lunch", {}, "Reminder: Call grandma about Sunday lunch"),
        ("Anna", "Pick up the test results", {"audience": Audience("private")}, "You have a reminder"),
        ("Anna", "Buy Ben's present", {"audience": Audience(hidden_from=ben)}, "You have a reminder"),
        ("Ben", "Bring the car keys", {}, "You have a reminder"),  # set by someone else: the app says by whom
        ("Anna", "water " * 30, {}, "Reminder: " + "water " * 13 + "w…"),  # 80 characters of the text
    ]  # fmt: skip
    for author, text, extra, shown in cases:
        web_id = await fire(deps, family, clock, author, text, **extra)
        [queued] = await pushes_of(system.admin, web_id)
        assert queued["text"] == shown, text

    for kind, shown, opens in (
        ("digest", "Your summary is ready", "/"),
        ("budget_alert", "A message about your budget", "/money"),
    ):
        async with deps.db.household(family.household_id) as conn:
            note = await outbox.add(
                conn, household_id=family.household_id, user_id=family.user_ids["Anna"], channel="web",
                recipient=str(family.user_ids["Anna"]), text="Groceries: 412.50 EUR of 400 EUR", payload={"kind": kind},
            )  # fmt: skip
        assert note is not None
        await delivery.deliver(deps, note, family.household_id)
        [queued] = await pushes_of(system.admin, note)
        assert (queued["text"], json.loads(queued["payload"])["url"]) == (shown, opens)  # no sums on a lock screen

    await system.admin.execute("UPDATE users SET locale = 'de' WHERE id = $1", family.user_ids["Anna"])
    reply = await reply_row(deps, family, "Anna", "de-1", "Erledigt.")
    await delivery.deliver(deps, reply, family.household_id)
    assert [row["text"] for row in await pushes_of(system.admin, reply)] == ["FAA hat geantwortet"]


async def test_a_dropped_subscription_is_removed_and_other_failures_retry(
    system: System, deps: Deps, push_service: FakePushService
) -> None:
    family = await make_family(system.admin, "Fail", {"Anna": "Europe/Berlin"})
    await turn_on(deps, family, "Anna", push_service, "gone")
    reply = await reply_row(deps, family, "Anna", "gone-1", "Done.")
    await delivery.deliver(deps, reply, family.household_id)
    [row] = await pushes_of(system.admin, reply)

    push_service.answers[:] = [500, 429]
    assert await delivery.deliver(deps, row["id"], family.household_id) == "retrying"
    assert await system.redis.zscore("arq:queue", f"outbox:{row['id']}:1") is not None
    assert await delivery.deliver(deps, row["id"], family.household_id) == "retrying"
    after = await system.admin.fetchrow(
        "SELECT status, attempts, next_attempt_at, now() AS now FROM outbox WHERE id = $1", row["id"]
    )
    assert (after["status"], after["attempts"]) == ("pending", 2)
    assert timedelta(seconds=6) < after["next_attempt_at"] - after["now"] <= timedelta(seconds=7)  # its Retry-After

    push_service.answers[:] = [410]
    assert await delivery.deliver(deps, row["id"], family.household_id) == "failed"
    assert await system.admin.fetchval("SELECT status FROM outbox WHERE id = $1", row["id"]) == "failed"
    assert await system.admin.fetchval(
        "SELECT count(*) FROM push_subscriptions WHERE household_id = $1", family.household_id
    ) == 0  # fmt: skip

    later = await reply_row(deps, family, "Anna", "gone-2", "Done again.")
    await delivery.deliver(deps, later, family.household_id)
    assert await pushes_of(system.admin, later) == []  # push is off for Anna now


async def test_a_forgotten_member_is_pushed_nothing_more(
    system: System, deps: Deps, push_service: FakePushService
) -> None:
    family = await make_family(system.admin, "Forget", {"Anna": "Europe/Berlin"})
    phone = await turn_on(deps, family, "Anna", push_service, "forgotten")
    reply = await reply_row(deps, family, "Anna", "forget-1", "Everything about you is forgotten.")
    async with deps.db.household(family.household_id, family.user_ids["Anna"]) as conn:
        await forget_member(conn, family.household_id, family.user_ids["Anna"], keep_inbox_id=None)
    assert await system.admin.fetchval(
        "SELECT count(*) FROM push_subscriptions WHERE household_id = $1", family.household_id
    ) == 0  # fmt: skip
    assert await delivery.deliver(deps, reply, family.household_id) == "sent"
    assert await pushes_of(system.admin, reply) == [] and push_service.to(phone) == []


def test_a_push_goes_only_to_a_listed_push_service() -> None:
    services = WebPushSettings().services
    for endpoint in (
        "https://fcm.googleapis.com/fcm/send/abc:def",
        "https://updates.push.services.mozilla.com/wpush/v2/gAAAA",
        "https://web.push.apple.com/QGx",
        "https://wns2-par02p.notify.windows.com/w/?token=BQY",
    ):
        assert endpoints.allowed(endpoint, services), endpoint
    for endpoint in (
        "http://127.0.0.1:6379/",  # a page's made-up address inside the network
        "https://fcm.googleapis.com.evil.example/fcm/send/x",
        "https://fcm.googleapis.com@evil.example/fcm/send/x",
        "https://evil.example/https://fcm.googleapis.com/",
        "https://notify.windows.com/w/",  # the wildcard wants a subdomain
        "http://fcm.googleapis.com/fcm/send/x",
        "https://fcm.googleapis.com/" + "x" * 2100,
    ):
        assert not endpoints.allowed(endpoint, services), endpoint
