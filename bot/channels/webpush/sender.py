"""Sending one push message (RFC 8030) with pywebpush: the payload encrypted for the browser (RFC 8291, aes128gcm)
and signed with the household's VAPID key (RFC 8292).

A push service that answers 404 or 410 has dropped the subscription (the member turned notifications off in the
browser, or it expired): the subscription is removed and the message fails for good. 429 and 5xx, a timeout or a
refused connection are transient and retried like any channel's delivery; any other answer is final.

Sending again after a crash is harmless to the member: the same `Topic` makes the push service replace a message it
still holds, and the same notification tag makes the browser replace the one it shows.
"""

from __future__ import annotations

import json

import aiohttp
import structlog
from py_vapid import Vapid
from pywebpush import WebPushException, webpush_async
from redis.exceptions import RedisError

from bot.channels.live import Presence
from bot.channels.webpush import endpoints, pushes
from engine.deps import Deps
from engine.errors import DeliveryError
from engine.settings import Settings
from tools.infra.vapid import b64url
from tools.storage import push
from tools.storage.outbox import OutboxRow

log = structlog.get_logger()

_GONE = (404, 410)


def contact(settings: Settings) -> str:
    """The VAPID `sub` claim: who a push service may write to about our pushes."""
    if settings.webpush.contact:
        return settings.webpush.contact
    if settings.email.address:
        return f"mailto:{settings.email.address}"
    if settings.media.base_url and settings.media.base_url.startswith("https://"):
        return settings.media.base_url
    return "mailto:faa@localhost"


class WebPushSender:
    """The ReplySender of the webpush channel: one outbox row is one push to one browser (its recipient is the
    subscription's id)."""

    def __init__(self, deps: Deps) -> None:
        self._db = deps.db
        self._presence = Presence(deps.redis) if deps.redis is not None else None
        self._settings = deps.settings
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def send(self, row: OutboxRow) -> None:
        async with self._db.household(row.household_id) as conn:
            subscription = await push.get(conn, int(row.recipient))
            key = await push.household_key(conn, row.household_id) if subscription is not None else None
        if subscription is None or key is None or subscription.user_id != row.user_id:
            raise DeliveryError("push was turned off in that browser", transient=False)
        if not endpoints.allowed(subscription.endpoint, self._settings.webpush.services):
            raise DeliveryError("the endpoint is on no allowed push service", transient=False)
        if await self._page_open(row.user_id):
            # Held back by quiet hours, and the member has opened the app since: it shows them everything.
            log.info("webpush.skipped", outbox_id=row.id, reason="page_open")
            return
        await self._post(row, subscription, key)

    async def _page_open(self, user_id: int) -> bool:
        if self._presence is None:
            return False
        try:
            return await self._presence.any_open(user_id)
        except (RedisError, OSError):
            return False  # the push goes out: better twice (page and phone) than not at all

    async def _post(self, row: OutboxRow, subscription: push.Subscription, key: bytes) -> None:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        settings = self._settings.webpush
        try:
            await webpush_async(
                subscription.info(),
                data=json.dumps(pushes.body(row), ensure_ascii=False),
                vapid_private_key=Vapid.from_raw(b64url(key).encode()),
                vapid_claims={"sub": contact(self._settings)},  # pywebpush adds aud and exp to this dict
                ttl=settings.ttl_s,
                timeout=settings.timeout_s,
                headers={"Topic": str(row.payload.get("tag", row.id)), "Urgency": "normal"},
                aiohttp_session=self._session,
            )
        except WebPushException as exc:
            status = exc.status_code
            if status in _GONE:
                async with self._db.household(row.household_id) as conn:
                    await push.remove(conn, subscription.id)
                log.info("webpush.subscription.removed", status=status)
                raise DeliveryError(f"the push service dropped the subscription ({status})", transient=False) from None
            if status is not None and (status == 429 or status >= 500):
                retry_after = exc.retry_after
                delay = float(retry_after) if retry_after and retry_after.isdigit() else None
                raise DeliveryError(f"push service answered {status}", transient=True, retry_after_s=delay) from None
            raise DeliveryError(f"push service refused the push ({status})", transient=False) from None
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise DeliveryError(f"push service unreachable: {type(exc).__name__}", transient=True) from exc
