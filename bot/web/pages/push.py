"""Push notifications for a member whose pages of the web app are closed: the reminders page's switch subscribes this
browser with its push service (the household's VAPID public key) and posts the subscription here; turning it off
removes it. When the push service replaces a browser's subscription, the service worker subscribes again and posts
the new one with the endpoint it replaces. Sending is the webpush channel's (`bot.channels.webpush`)."""

from __future__ import annotations

import base64
import binascii

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bot.channels.webpush import endpoints
from bot.web.pages.render import CSRF, VIEWER, texts
from bot.web.pages.security import DEPS
from bot.web.pages.tooling import json_body, json_error
from tools.infra import vapid
from tools.storage import push


class _Keys(BaseModel):
    p256dh: str = Field(max_length=200)
    auth: str = Field(max_length=100)

    @field_validator("p256dh")
    @classmethod
    def _point(cls, value: str) -> str:
        raw = _b64url(value)
        if len(raw) != 65 or raw[0] != 4:
            raise ValueError("p256dh must be an uncompressed P-256 point")
        return value

    @field_validator("auth")
    @classmethod
    def _secret(cls, value: str) -> str:
        if len(_b64url(value)) != 16:
            raise ValueError("auth must be 16 bytes")
        return value


class SubscriptionBody(BaseModel):
    """The browser's PushSubscription.toJSON()."""

    model_config = ConfigDict(extra="ignore")

    endpoint: str = Field(max_length=endpoints.MAX_ENDPOINT_CHARS)
    keys: _Keys
    renew: bool = False  # a page checking in: keep it in step only if push is on for this member already
    replaces: str | None = Field(None, max_length=endpoints.MAX_ENDPOINT_CHARS)  # the subscription it succeeds


class RemovalBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    endpoint: str = Field(max_length=endpoints.MAX_ENDPOINT_CHARS)


async def key(request: web.Request) -> web.Response:
    """GET /app/push: `{"key", "csrf"}`, what the service worker needs to subscribe this browser again (the
    household's VAPID public key) and to post it (the CSRF token, which a page has in its HTML)."""
    deps, viewer = request.app[DEPS], request[VIEWER]
    if not deps.settings.webpush.enabled:
        return json_error(404, "not_found", texts(request)("push.unavailable"))
    async with deps.db.household(viewer.household_id, viewer.user_id) as conn:
        public = vapid.public_key(await push.ensure_key(conn, viewer.household_id))
    return web.json_response({"key": public, "csrf": request[CSRF]}, headers={"Cache-Control": "no-store"})


async def subscribe(request: web.Request) -> web.Response:
    """POST /app/push {"endpoint", "keys": {"p256dh", "auth"}}: push on for this browser and member, `{"push": true}`.
    With `"replaces": "<endpoint>"` (the service worker, when the push service replaced the browser's subscription)
    the household's subscription of that endpoint takes the new one and stays whose it was: in a browser members
    share, the one signed in now may not be the one who turned push on. An endpoint the household does not know
    turns nothing on. With `"renew": true` (the page checks in on load) nothing is turned on either. Both answer
    whether push is on for this member in this browser (a browser another member turned on stays theirs)."""
    deps, viewer = request.app[DEPS], request[VIEWER]
    if not deps.settings.webpush.enabled:
        return json_error(404, "not_found", texts(request)("push.unavailable"))
    try:
        body = SubscriptionBody.model_validate(await json_body(request))
    except ValidationError:
        return json_error(400, "invalid", texts(request)("push.failed"))
    if not endpoints.allowed(body.endpoint, deps.settings.webpush.services):
        return json_error(400, "invalid", texts(request)("push.unknown_service"))
    member, keys = (viewer.household_id, viewer.user_id), (body.endpoint, body.keys.p256dh, body.keys.auth)
    async with deps.db.household(viewer.household_id, viewer.user_id) as conn:
        # A worker that had no old subscription to name (`"replaces": null`) cannot say whose the new one is: it
        # turns nothing on, as a page checking in does.
        if body.renew or (body.replaces is None and "replaces" in body.model_fields_set):
            return web.json_response({"push": await push.renew(conn, *member, *keys)})
        if body.replaces is not None:
            owner = await push.replace(conn, viewer.household_id, body.replaces, *keys)
            return web.json_response({"push": owner == viewer.user_id})
        await push.subscribe(conn, *member, *keys)
    return web.json_response({"push": True})


async def unsubscribe(request: web.Request) -> web.Response:
    """POST /app/push/remove {"endpoint"}: push off for this browser."""
    deps, viewer = request.app[DEPS], request[VIEWER]
    try:
        body = RemovalBody.model_validate(await json_body(request))
    except ValidationError:
        return json_error(400, "invalid", texts(request)("push.failed"))
    async with deps.db.household(viewer.household_id, viewer.user_id) as conn:
        await push.unsubscribe(conn, viewer.household_id, viewer.user_id, body.endpoint)
    return web.json_response({"push": False})


def _b64url(value: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("not base64url") from None
