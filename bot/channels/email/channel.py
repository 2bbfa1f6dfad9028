"""Email as a `Channel`: on when EMAIL_ADDRESS is set. Its signed webhook needs EMAIL_WEBHOOK_SIGNING_KEY, its SMTP
receiver EMAIL_SMTP_PORT, and its replies an SMTP relay (EMAIL_RELAY_HOST); each part is on when it is set."""

from __future__ import annotations

from aiohttp import web

from bot.channels.channel import Listener, Outbound
from bot.channels.email import CHANNEL, webhook
from bot.channels.email.inbound import EmailInbound, Notices
from bot.channels.email.sender import EmailSender, thread_loader
from bot.channels.email.smtp_server import SmtpReceiver
from bot.channels.media import media_loader
from engine.deps import Deps
from engine.settings import Settings


class EmailChannel:
    name = CHANNEL

    def enabled(self, settings: Settings) -> bool:
        return settings.email.address is not None

    def mount(self, app: web.Application, deps: Deps) -> None:
        if deps.settings.email.webhook_enabled:
            webhook.add_routes(app, EmailInbound(deps, Notices(deps)))

    def listener(self, deps: Deps) -> Listener | None:
        return SmtpReceiver(EmailInbound(deps, Notices(deps))) if deps.settings.email.smtp_enabled else None

    def outbound(self, deps: Deps) -> Outbound:
        if not deps.settings.email.sending_enabled:
            return Outbound()
        load_thread = thread_loader(deps.db)
        return Outbound(EmailSender(deps.settings.email, load_media=media_loader(deps.db), load_thread=load_thread))
