"""The webhook Telegram posts updates to: secret first, then the body, then the routers, then 200.

Every handler runs before the answer (aiogram's background handling would lose an update whose task dies
with the process), so a 200 means the message is in the inbox. Wrong or missing secret: 401; a body that is
not an Update: 400; over WEB_MAX_BODY_BYTES: 413 — and no row in any of those cases. Update types we do not
handle are answered 200 so that Telegram does not redeliver them.
"""

from __future__ import annotations

import hmac
import uuid
from collections.abc import AsyncIterator

import structlog
from aiogram import Bot, Dispatcher
from aiogram.types import Update
from aiogram.types.update import UpdateTypeLookupError
from aiohttp import web
from pydantic import ValidationError

from bot.channels.telegram.client import ALLOWED_UPDATES, make_bot
from bot.channels.telegram.handlers import routers
from engine.deps import Deps

log = structlog.get_logger()

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class TelegramWebhook:
    def __init__(self, deps: Deps, bot: Bot) -> None:
        secret = deps.settings.telegram.webhook_secret
        assert secret is not None, "the Telegram channel is enabled only with a webhook secret"
        self.deps = deps
        self.bot = bot
        self._secret = secret.get_secret_value().encode()
        self._dispatcher = Dispatcher(name="telegram")
        self._dispatcher.include_routers(*routers())

    async def handle(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self._secret):
            log.warning("telegram.webhook.forbidden", secret_given=bool(given))
            raise web.HTTPUnauthorized()
        raw = await request.read()  # over the body limit: 413 before anything is parsed
        try:
            update = Update.model_validate_json(raw, context={"bot": self.bot})
        except ValidationError as exc:
            log.warning("telegram.webhook.malformed", problems=len(exc.errors()))
            raise web.HTTPBadRequest() from None
        try:
            update_type = update.event_type
        except UpdateTypeLookupError:  # newer than our aiogram: not ours to handle, and not to be redelivered
            update_type = "unknown"
        verdict = None
        if update_type in ALLOWED_UPDATES:
            trace_id = structlog.contextvars.get_contextvars().get("trace_id") or uuid.uuid4().hex
            verdict = await self._dispatcher.feed_update(
                self.bot, update, deps=self.deps, trace_id=trace_id, username=await self._username()
            )
        log.info("telegram.update.handled", update_type=update_type, verdict=getattr(verdict, "value", None))
        return web.json_response({})

    async def _username(self) -> str:
        configured = self.deps.settings.telegram.bot_username
        if configured:
            return configured.lstrip("@")
        me = await self.bot.me()  # asked once, then cached by aiogram
        return me.username or ""


TELEGRAM = web.AppKey("telegram", TelegramWebhook)


async def _handle(request: web.Request) -> web.Response:
    return await request.app[TELEGRAM].handle(request)


def add_webhook(app: web.Application, deps: Deps) -> None:
    """Route TELEGRAM_WEBHOOK_PATH to the receiver; the bot's HTTP session lives as long as the app."""

    async def bot_context(app: web.Application) -> AsyncIterator[None]:
        bot = make_bot(deps.settings.telegram)
        app[TELEGRAM] = TelegramWebhook(deps, bot)
        yield
        await bot.session.close()

    app.cleanup_ctx.append(bot_context)
    app.router.add_post(deps.settings.telegram.webhook_path, _handle)
