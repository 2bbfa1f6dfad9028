"""Live delivery inside FAA's own processes: replies and stream events travel from worker to web over Redis.

The web API and the terminal chat have no external peer: their "sender" publishes the reply on a Redis channel
that the waiting request (or terminal) listens to; the outbox row stays the record of it. A notification that
answers no message (a reminder) goes to the member's own channel, and the sent outbox row is its entry in the
member's notification feed (`GET /v1/notifications`).

Which members have a page of the web app open is kept in Redis too (`Presence`): the page's event stream marks
itself while it is connected, and a web app delivery for a member with no page open also goes out as a push message.

Rows that changed where a page did not see it (a reminder fired, set or moved in a chat, by another member) are
announced on the same member channels (`announce_change`), so an open page showing them reads them again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import asdict
from typing import Any

import structlog
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from bot.channels.errors import EventStreamError
from engine.deps import Deps
from engine.errors import DeliveryError, StorageError
from engine.llm_types import StreamEvent
from tools.infra.queue import channel_name
from tools.storage import households
from tools.storage.outbox import OutboxRow

log = structlog.get_logger()


def reply_message(row: OutboxRow) -> dict[str, Any]:
    return {"message_id": row.inbox_id, "reply": row.text, **row.payload}


def notification(row: OutboxRow) -> dict[str, Any]:
    """A feed entry: a reminder carries kind, reminder_id and its quick-reply options in the payload."""
    sent = row.sent_at or row.created_at
    return {"id": row.id, "text": row.text, **row.payload, "created_at": sent.isoformat()}


async def announce_change(redis: Redis, user_ids: Iterable[int], what: str) -> None:
    """Tell the members' open pages that rows of `what` ("reminders") changed. Not kept anywhere: a page that was
    not connected reads them when it opens or reconnects, so a Redis that is down costs only a late update."""
    message = json.dumps({"changed": what})
    try:
        async with redis.pipeline(transaction=False) as pipe:
            for user_id in user_ids:
                pipe.publish(channel_name(redis, "notify", user_id), message)
            await pipe.execute()
    except (RedisError, OSError) as exc:
        log.warning("live.change.unannounced", what=what, error=type(exc).__name__)


async def announce_household_change(deps: Deps, household_id: int, what: str) -> None:
    """`announce_change` to every member of the household: each page reads the rows again under its member's
    own rights, so a member is told only that something changed, never what."""
    if deps.redis is None:  # a process without live delivery (the command line)
        return
    try:
        async with deps.db.household(household_id) as conn:
            members = await households.members(conn, household_id)
    except StorageError as exc:
        log.warning("live.change.unannounced", what=what, error=exc.reason[:200])
        return
    await announce_change(deps.redis, [member.id for member in members], what)


class LiveReplySender:
    """The ReplySender of the web and terminal channels."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis

    async def send(self, row: OutboxRow) -> None:
        if row.inbox_id is None:
            channel, message = channel_name(self._redis, "notify", row.user_id), notification(row)
        else:
            channel, message = channel_name(self._redis, "reply", row.inbox_id), reply_message(row)
        try:
            await self._redis.publish(channel, json.dumps(message))
        except (RedisError, OSError) as exc:
            raise DeliveryError(f"redis unreachable: {type(exc).__name__}", transient=True) from exc


class Presence:
    """Which members have a page of the web app open, across web processes: a sorted set per member of their open
    pages, each scored with when its mark lapses. A page renews its mark while connected (every `RENEW_S`) and
    removes it when it goes; a web process that dies leaves marks that lapse within `TTL_S`."""

    RENEW_S = 25.0
    TTL_S = 60.0

    def __init__(self, redis: Redis) -> None:
        self._redis = redis

    def _key(self, user_id: int) -> str:
        return channel_name(self._redis, "presence", user_id)

    async def mark(self, user_id: int, page: str) -> None:
        """The page is open (call again within TTL_S to keep it so)."""
        key = self._key(user_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key, {page: time.time() + self.TTL_S})
            pipe.zremrangebyscore(key, "-inf", time.time())
            pipe.expire(key, int(self.TTL_S) + 1)
            await pipe.execute()

    async def unmark(self, user_id: int, page: str) -> None:
        await self._redis.zrem(self._key(user_id), page)

    async def any_open(self, user_id: int) -> bool:
        return bool(await self._redis.zcount(self._key(user_id), f"({time.time()}", "+inf"))


class RedisEventSink:
    """Publishes a message's stream events for whoever follows it (the SSE endpoint)."""

    def __init__(self, redis: Redis, inbox_id: int) -> None:
        self._redis = redis
        self._channel = channel_name(redis, "events", inbox_id)

    async def __call__(self, event: StreamEvent) -> None:
        try:
            await self._redis.publish(self._channel, json.dumps(asdict(event), default=str))
        except (RedisError, OSError) as exc:
            raise EventStreamError(type(exc).__name__) from exc


class _Subscription:
    """One Redis pattern subscription per process (`<kind>:*`), each message handed to `_deliver` by the id its
    channel ends with; a lost connection is retried every second."""

    kind: str  # the channel kind: "reply" (by inbox id) or "notify" (by member id)

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._listen())
        await self._ready.wait()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _deliver(self, key: int, message: dict[str, Any]) -> None:
        raise NotImplementedError

    async def _listen(self) -> None:
        while True:
            try:
                await self._listen_once()
            except RedisConnectionError:
                # Waiting requests fall back to their timeout (202 + poll); pages get what they missed when they
                # reconnect; new ones are served after reconnecting.
                log.warning("live.subscription.disconnected", kind=self.kind)
                await asyncio.sleep(1.0)

    async def _listen_once(self) -> None:
        pubsub = self._redis.pubsub()
        try:
            await pubsub.psubscribe(channel_name(self._redis, self.kind, "*"))
            self._ready.set()
            async for item in pubsub.listen():
                if item.get("type") != "pmessage":
                    continue
                try:
                    key = int(item["channel"].decode().rsplit(":", 1)[1])
                    message = json.loads(item["data"])
                except (ValueError, IndexError, UnicodeDecodeError):
                    log.warning("live.subscription.bad_message", kind=self.kind)
                    continue
                self._deliver(key, message)
        finally:
            await pubsub.aclose()


class ReplyWaiter(_Subscription):
    """One Redis subscription per process, handing published replies to the requests waiting for them."""

    kind = "reply"

    def __init__(self, redis: Redis) -> None:
        super().__init__(redis)
        self._waiting: dict[int, list[asyncio.Future[dict[str, Any]]]] = {}

    def expect(self, inbox_id: int) -> asyncio.Future[dict[str, Any]]:
        """Register before checking the database, so a reply published in between is not missed."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(inbox_id, []).append(future)
        return future

    def forget(self, inbox_id: int, future: asyncio.Future[dict[str, Any]]) -> None:
        futures = self._waiting.get(inbox_id, [])
        if future in futures:
            futures.remove(future)
        if not futures:
            self._waiting.pop(inbox_id, None)

    def _deliver(self, inbox_id: int, reply: dict[str, Any]) -> None:
        for future in self._waiting.pop(inbox_id, []):
            if not future.done():
                future.set_result(reply)


@contextlib.asynccontextmanager
async def follow_notifications(redis: Redis, user_id: int) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
    """Subscribe to one member's notifications as they are delivered (the terminal chat prints them)."""
    pubsub = redis.pubsub()
    await pubsub.subscribe(channel_name(redis, "notify", user_id))

    async def notes() -> AsyncIterator[dict[str, Any]]:
        async for item in pubsub.listen():
            if item.get("type") == "message":
                note = json.loads(item["data"])
                if "changed" not in note:  # rows that changed are news for pages that show them, not a message
                    yield note

    try:
        yield notes()
    finally:
        await pubsub.aclose()


@contextlib.asynccontextmanager
async def follow_events(redis: Redis, inbox_id: int) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
    """Subscribe to one message's events; the iterator ends after `stream_end`."""
    pubsub = redis.pubsub()
    await pubsub.subscribe(channel_name(redis, "events", inbox_id))

    async def events() -> AsyncIterator[dict[str, Any]]:
        async for item in pubsub.listen():
            if item.get("type") != "message":
                continue
            event = json.loads(item["data"])
            yield event
            if event.get("type") == "stream_end":
                return

    try:
        yield events()
    finally:
        await pubsub.aclose()


class NotificationHub(_Subscription):
    """One Redis subscription per web process for every member's notifications (reminders, digests delivered on the
    web channel), handed to the pages each member has open (`GET /app/events`): no connection per open page."""

    _QUEUE_SIZE = 100  # a page that stopped reading loses the oldest beyond this; the feed still lists them

    kind = "notify"

    def __init__(self, redis: Redis) -> None:
        super().__init__(redis)
        self._pages: dict[int, set[asyncio.Queue[dict[str, Any]]]] = {}

    @contextlib.contextmanager
    def follow(self, user_id: int) -> Iterator[asyncio.Queue[dict[str, Any]]]:
        """The member's notifications from now on, for one open page."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(self._QUEUE_SIZE)
        self._pages.setdefault(user_id, set()).add(queue)
        try:
            yield queue
        finally:
            pages = self._pages.get(user_id, set())
            pages.discard(queue)
            if not pages:
                self._pages.pop(user_id, None)

    def _deliver(self, user_id: int, note: dict[str, Any]) -> None:
        for queue in self._pages.get(user_id, ()):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(note)
