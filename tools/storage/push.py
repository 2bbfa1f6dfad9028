"""Web Push in storage: the household's VAPID key, the browsers members turned push on in (`push_subscriptions`),
and the push messages queued in the outbox for a web app row the member had no open page for."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tools.infra import vapid
from tools.storage.database import Connection

CHANNEL = "webpush"  # the outbox channel of push messages (`bot.channels.webpush`)


@dataclass(frozen=True)
class Subscription:
    id: int
    household_id: int
    user_id: int
    endpoint: str
    p256dh: str
    auth: str

    def info(self) -> dict[str, Any]:
        """As the browser's PushSubscription.toJSON() gave it (what pywebpush takes)."""
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}


_COLUMNS = "id, household_id, user_id, endpoint, p256dh, auth"


async def household_key(conn: Connection, household_id: int) -> bytes | None:
    """The household's VAPID private value (None only for a household made before push, until `ensure_key`)."""
    key: bytes | None = await conn.fetchval("SELECT vapid_private_key FROM households WHERE id = $1", household_id)
    return key


async def ensure_key(conn: Connection, household_id: int) -> bytes:
    """The household's VAPID private value, made now for a household that has none (it predates push)."""
    key = await household_key(conn, household_id)
    if key is not None:
        return key
    made: bytes = await conn.fetchval(
        """UPDATE households SET vapid_private_key = coalesce(vapid_private_key, $2) WHERE id = $1
           RETURNING vapid_private_key""",
        household_id,
        vapid.new_private_key(),
    )
    return made


async def subscribe(conn: Connection, household_id: int, user_id: int, endpoint: str, p256dh: str, auth: str) -> int:
    """Push on for this browser and member (a browser the household knew already moves to this member)."""
    subscription_id = await conn.fetchval(
        """INSERT INTO push_subscriptions (household_id, user_id, endpoint, p256dh, auth) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (household_id, endpoint)
           DO UPDATE SET user_id = EXCLUDED.user_id, p256dh = EXCLUDED.p256dh, auth = EXCLUDED.auth, created_at = now()
           RETURNING id""",
        household_id,
        user_id,
        endpoint,
        p256dh,
        auth,
    )
    return int(subscription_id)


async def renew(conn: Connection, household_id: int, user_id: int, endpoint: str, p256dh: str, auth: str) -> bool:
    """The browser's current keys for a subscription that is this member's; False (nothing changed) for any other."""
    renewed = await conn.fetchval(
        """UPDATE push_subscriptions SET p256dh = $4, auth = $5
           WHERE household_id = $1 AND user_id = $2 AND endpoint = $3 RETURNING true""",
        household_id,
        user_id,
        endpoint,
        p256dh,
        auth,
    )
    return bool(renewed)


async def replace(
    conn: Connection, household_id: int, replaced: str, endpoint: str, p256dh: str, auth: str
) -> int | None:
    """The subscription a push service put in place of `replaced` in the household: it stays with the member it
    was turned on for, whoever is signed in to the browser now (a shared browser keeps showing that member's
    notifications, to no one else). Returns that member; None when the household had no subscription `replaced`,
    and then nothing is turned on.

    When the household knows `endpoint` already (a member turned push on with it meanwhile), that turning on
    stands and the replaced subscription, which its push service no longer serves, goes."""
    if replaced != endpoint:
        known = await conn.fetchval(
            """UPDATE push_subscriptions SET p256dh = $3, auth = $4
               WHERE household_id = $1 AND endpoint = $2 RETURNING user_id""",
            household_id,
            endpoint,
            p256dh,
            auth,
        )
        if known is not None:
            await conn.execute(
                "DELETE FROM push_subscriptions WHERE household_id = $1 AND endpoint = $2", household_id, replaced
            )
            return int(known)
    # The row keeps its id too: push messages queued for the old endpoint go to the new one.
    owner = await conn.fetchval(
        """UPDATE push_subscriptions SET endpoint = $3, p256dh = $4, auth = $5
           WHERE household_id = $1 AND endpoint = $2 RETURNING user_id""",
        household_id,
        replaced,
        endpoint,
        p256dh,
        auth,
    )
    return None if owner is None else int(owner)


async def unsubscribe(conn: Connection, household_id: int, user_id: int, endpoint: str) -> bool:
    """Push off for this browser; False when it was not on for this member."""
    removed = await conn.fetchval(
        "DELETE FROM push_subscriptions WHERE household_id = $1 AND user_id = $2 AND endpoint = $3 RETURNING true",
        household_id,
        user_id,
        endpoint,
    )
    return bool(removed)


async def remove(conn: Connection, subscription_id: int) -> None:
    """A subscription its push service says is gone (404, 410)."""
    await conn.execute("DELETE FROM push_subscriptions WHERE id = $1", subscription_id)


async def get(conn: Connection, subscription_id: int) -> Subscription | None:
    row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM push_subscriptions WHERE id = $1", subscription_id)
    return None if row is None else Subscription(**dict(row))


async def subscriptions(conn: Connection, household_id: int, user_id: int) -> list[Subscription]:
    rows = await conn.fetch(
        f"SELECT {_COLUMNS} FROM push_subscriptions WHERE household_id = $1 AND user_id = $2 ORDER BY id",
        household_id,
        user_id,
    )
    return [Subscription(**dict(row)) for row in rows]


async def queue(
    conn: Connection,
    source_id: int,
    subscription: Subscription,
    *,
    text: str,
    payload: dict[str, Any],
    not_before: datetime | None,
) -> int | None:
    """The push message telling one browser of outbox row `source_id`; None when it has one already."""
    value = await conn.fetchval(
        """INSERT INTO outbox (household_id, user_id, channel, recipient, text, payload, next_attempt_at, source_id)
           VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, now()), $8)
           ON CONFLICT (source_id, recipient) WHERE source_id IS NOT NULL DO NOTHING
           RETURNING id""",
        subscription.household_id,
        subscription.user_id,
        CHANNEL,
        str(subscription.id),
        text,
        payload,
        not_before,
        source_id,
    )
    return None if value is None else int(value)


@dataclass(frozen=True)
class Recipient:
    """What a push to a member depends on: their language, clock and quiet hours."""

    locale: str
    timezone: str
    quiet_start: Any
    quiet_end: Any


async def recipient(conn: Connection, household_id: int, user_id: int) -> Recipient | None:
    """The member, unless they were forgotten (nothing is delivered to them then)."""
    row = await conn.fetchrow(
        """SELECT locale, timezone, quiet_start, quiet_end FROM users
           WHERE household_id = $1 AND id = $2 AND forgotten_at IS NULL""",
        household_id,
        user_id,
    )
    return None if row is None else Recipient(**dict(row))


async def own_reminder_text(conn: Connection, reminder_id: int, user_id: int) -> str | None:
    """The reminder's text when a lock screen may show it: the member set it themselves and it is the household's
    (neither private nor kept from anyone). Run acting for nobody, row-level security hides the others too."""
    text: str | None = await conn.fetchval(
        """SELECT text FROM reminders
           WHERE id = $1 AND created_by = $2 AND visibility = 'household' AND hidden_from IS NULL""",
        reminder_id,
        user_id,
    )
    return text
