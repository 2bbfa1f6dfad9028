"""One path for every email that arrives, by webhook or by SMTP: parse, store its files, hand it to the gate.

Images and files are stored in `media` at intake (we already hold the bytes), under the sender's household,
before the inbox row is written; when the gate does not take the message (a duplicate, a rate limit) they are
deleted again. Notices to the sender (welcome, unknown sender, slow down) go straight back through the relay,
in the background, so the webhook answers in milliseconds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
from dataclasses import dataclass
from typing import Any

import structlog

from bot.channels import attachments, numbered
from bot.channels.email import CHANNEL
from bot.channels.email.parsing import ParsedEmail, parse
from bot.channels.email.sender import SmtpRelay, compose
from bot.channels.gate import Incoming, Received, Verdict, receive
from engine.deps import Deps
from engine.domain import Attachment
from engine.errors import DeliveryError
from tools.storage import identities, media
from tools.storage.households import Principal

log = structlog.get_logger()

_EMPTY = "Your email reached me empty. Please write your message in the body (or the subject) and send it again."


class Refusal(enum.StrEnum):
    """Why an email was not handed to the gate at all."""

    NO_SENDER = "no_sender"  # no usable From address: nobody to identify or answer
    AUTOMATIC = "automatic"  # an auto-reply, bounce or list mail, or our own address: answering would loop
    EMPTY = "empty"  # nothing to read: no text, no subject, no attachment


@dataclass(frozen=True)
class Taken:
    refusal: Refusal | None = None
    received: Received | None = None


def thread_of(parsed: ParsedEmail) -> dict[str, Any]:
    """The parent's threading headers, as a reply to it needs them (`sender.compose`)."""
    return {
        "message_id": parsed.message_id if parsed.has_message_id else None,
        "references": list(parsed.references),
        "in_reply_to": parsed.in_reply_to,
        "subject": parsed.subject,
    }


class Notices:
    """Short direct emails to a sender, sent in the background; `drain` waits for those under way."""

    def __init__(self, deps: Deps) -> None:
        self.settings = deps.settings.email
        self.relay = SmtpRelay(self.settings)
        self.tasks: set[asyncio.Task[None]] = set()

    def send(self, to: str, text: str, parsed: ParsedEmail) -> None:
        if not self.settings.sending_enabled:
            log.warning("email.notice.unsent", reason="EMAIL_RELAY_HOST is not set")
            return
        msg = compose(self.settings, to=to, text=text, thread=thread_of(parsed))
        task = asyncio.create_task(self._send(msg))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _send(self, msg: Any) -> None:
        try:
            await self.relay.send(msg)
            log.info("email.notice.sent")
        except DeliveryError as exc:
            log.warning("email.notice.failed", reason=exc.reason)

    async def drain(self) -> None:
        if self.tasks:
            await asyncio.gather(*self.tasks)


class EmailInbound:
    def __init__(self, deps: Deps, notices: Notices) -> None:
        self.deps = deps
        self.notices = notices

    async def take(self, raw: bytes, trace_id: str) -> Taken:
        """Parse one raw message and pass it through the gate (`bot.channels.gate.receive`)."""
        parsed = await asyncio.to_thread(parse, raw)  # a 25 MB message takes a while: off the event loop
        if parsed.sender is None:
            log.warning("email.refused", reason=Refusal.NO_SENDER.value)
            return Taken(Refusal.NO_SENDER)
        if parsed.automatic or parsed.sender in self.deps.settings.email.own_addresses:
            log.info("email.ignored", reason=Refusal.AUTOMATIC.value)
            return Taken(Refusal.AUTOMATIC)
        async with self.deps.db.unscoped() as conn:
            principal = await identities.resolve_identity(conn, CHANNEL, parsed.sender)
        sender = parsed.sender
        parsed, dropped = self._kept(parsed)
        if not parsed.text and not parsed.files and parsed.join_code is None:
            if principal is not None:
                self.notices.send(sender, attachments.notice(dropped) if dropped else _EMPTY, parsed)
            return Taken(Refusal.EMPTY)
        stored: list[int] = []
        files = await self._attachments(parsed, principal, stored)
        text, choice = await numbered.resolve_choice(self.deps, CHANNEL, sender, parsed.text)
        incoming = Incoming(
            channel=CHANNEL,
            sender=sender,
            # Scoped by sender: Message-IDs are chosen by whoever sends, so one person cannot take another's.
            message_id=f"{sender} {parsed.message_id}",
            text=text,
            reply_to=sender,
            trace_id=trace_id,
            join_code=parsed.join_code,
            join_hint="JOIN <code> (as the subject or the first line of an email)",
            payload={
                "thread": thread_of(parsed),
                "attachments": [dataclasses.asdict(a) for a in files],
                **choice,
            },
        )
        received: Received | None = None
        try:
            received = await receive(self.deps, incoming)
        finally:
            if stored and principal is not None:
                await self._settle(principal, stored, received)
        if received.notice is not None:
            self.notices.send(sender, received.notice, parsed)
        if dropped and received.verdict is Verdict.ACCEPTED:  # once, not again for a provider's redelivery
            self.notices.send(sender, attachments.notice(dropped), parsed)
        return Taken(received=received)

    def _kept(self, parsed: ParsedEmail) -> tuple[ParsedEmail, list[attachments.Dropped]]:
        """The message with only the files FAA keeps (`bot.channels.attachments`), and those it does not."""
        kept, dropped = [], []
        for file in parsed.files:
            reason = attachments.refusal(self.deps.settings.channel, file.mime, file.name, len(file.data))
            if reason is None:
                kept.append(file)
            else:
                dropped.append(attachments.Dropped(file.name or file.mime, reason))
        if dropped:
            log.info("email.attachments.dropped", count=len(dropped))
        return dataclasses.replace(parsed, files=tuple(kept)), dropped

    async def _attachments(
        self, parsed: ParsedEmail, principal: Principal | None, stored: list[int]
    ) -> list[Attachment]:
        attachments: list[Attachment] = []
        for file in parsed.files:
            if file.kind == "text":
                attachments.append(Attachment("text", file.mime, text=file.text, name=file.name))
            elif principal is not None and parsed.join_code is None:
                async with self.deps.db.household(principal.household_id, principal.user_id) as conn:
                    media_id = await media.save(
                        conn, principal.household_id, kind=file.kind, mime=file.mime, data=file.data
                    )
                stored.append(media_id)
                attachments.append(Attachment(file.kind, file.mime, media_id=media_id, name=file.name))
        return attachments

    async def _settle(self, principal: Principal, stored: list[int], received: Received | None) -> None:
        """Tie the stored files to the new inbox row, or delete them when no new row took them."""
        async with self.deps.db.household(principal.household_id, principal.user_id) as conn:
            if received is not None and received.verdict is Verdict.ACCEPTED and received.row is not None:
                await media.link_to_inbox(conn, stored, received.row.id)
            else:
                await media.discard(conn, stored)
