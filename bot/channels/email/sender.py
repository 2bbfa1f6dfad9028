"""Replies by email through an SMTP relay (aiosmtplib), threaded under the member's message.

Threading follows RFC 5322: our own `Message-ID`, `In-Reply-To` the parent's Message-ID, `References` the
parent's References plus its Message-ID, and `Re: <subject>`. The parent's headers were kept in the inbox
payload at intake (`payload["thread"]`); `load_thread` reads them back for the outbox row's message.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from email.message import EmailMessage
from email.utils import formataddr, formatdate, make_msgid
from typing import Any

import aiosmtplib
import structlog

from bot.channels import numbered
from bot.channels.media import LoadMedia
from engine.channel_settings import EmailSettings
from engine.errors import DeliveryError
from tools.storage import inbox
from tools.storage.database import Database
from tools.storage.outbox import OutboxRow

log = structlog.get_logger()

LoadThread = Callable[[int, int], Awaitable[Mapping[str, Any]]]  # (household_id, inbox_id) -> payload["thread"]

_RE = re.compile(r"^\s*(?:re|aw|sv|antw|答复|回复)\s*(?:\[\d+\])?\s*[:：]\s*", re.IGNORECASE)
_SUBJECTS = {"reminder": "Reminder", "digest": "Your FAA digest"}
_AUTH_RETRY_S = 600.0  # a wrong relay password is fixed by a person: retry slowly rather than give up


def reply_subject(parent: str | None, kind: str = "reply") -> str:
    """`Re: <parent subject>` with exactly one `Re:` however many the parent carried."""
    if not parent or not parent.strip():
        return _SUBJECTS.get(kind, "Message from FAA")
    stripped = parent.strip()
    while _RE.match(stripped):
        stripped = _RE.sub("", stripped, count=1)
    return f"Re: {stripped}" if stripped else "Re:"


def references(thread: Mapping[str, Any]) -> list[str]:
    """Our reply's References: the parent's References and its Message-ID (RFC 5322 3.6.4). A parent without
    References that answered one message stands for that message's thread: its In-Reply-To comes first."""
    parent_references = list(thread.get("references") or [])
    if not parent_references and thread.get("in_reply_to"):
        parent_references = [str(thread["in_reply_to"])]
    return [*parent_references, str(thread["message_id"])][-20:]


def compose(
    settings: EmailSettings,
    *,
    to: str,
    text: str,
    thread: Mapping[str, Any] | None = None,
    kind: str = "reply",
    options: Sequence[str] = (),
    images: Sequence[tuple[str, bytes]] = (),
    message_id: str | None = None,
) -> EmailMessage:
    """One plain-text message from FAA, threaded under `thread` (the parent's message_id, references, subject);
    `message_id` (default: a new one) is the same for every attempt to send one outbox row."""
    thread = thread or {}
    msg = EmailMessage()
    msg["From"] = formataddr(("FAA", settings.address or ""))
    msg["To"] = to
    msg["Subject"] = reply_subject(thread.get("subject"), kind)
    msg["Date"] = formatdate(usegmt=True)
    msg["Message-ID"] = message_id or make_msgid(domain=settings.message_domain)
    parent = thread.get("message_id")
    if parent:
        msg["In-Reply-To"] = parent
        msg["References"] = " ".join(references(thread))
    # RFC 3834: vacation responders and other robots must not answer an automatic message (no mail loops).
    msg["Auto-Submitted"] = "auto-replied"
    msg.set_content(numbered.render(text, options))
    for number, (mime, data) in enumerate(images, 1):
        maintype, _, subtype = mime.partition("/")
        msg.add_attachment(
            data,
            maintype=maintype,
            subtype=subtype or "octet-stream",
            filename=f"chart-{number}.png",
            disposition="inline",
        )
    return msg


class SmtpRelay:
    """The relay every outgoing email goes through: replies from the worker, notices from the web process."""

    def __init__(self, settings: EmailSettings) -> None:
        self.settings = settings

    async def send(self, msg: EmailMessage) -> None:
        """Hand the message to the relay; raise `DeliveryError`, permanent when the relay said 5xx."""
        s = self.settings
        try:
            await aiosmtplib.send(
                msg,
                sender=s.address,
                hostname=s.relay_host,
                port=s.relay_port,
                username=s.relay_user,
                password=s.relay_password.get_secret_value() if s.relay_password else None,
                use_tls=s.relay_tls == "tls",
                start_tls=True if s.relay_tls == "starttls" else False,
                timeout=s.relay_timeout_s,
            )
        except aiosmtplib.SMTPAuthenticationError as exc:
            raise DeliveryError(
                f"relay refused our login: {exc.code}", transient=True, retry_after_s=_AUTH_RETRY_S
            ) from exc
        except aiosmtplib.SMTPRecipientsRefused as exc:
            codes = [refused.code for refused in exc.recipients]
            raise DeliveryError(f"recipient refused: {codes}", transient=any(c < 500 for c in codes)) from exc
        except aiosmtplib.SMTPResponseException as exc:
            raise DeliveryError(f"relay answered {exc.code}", transient=exc.code < 500) from exc
        except (aiosmtplib.SMTPException, OSError) as exc:
            raise DeliveryError(f"relay unreachable: {type(exc).__name__}", transient=True) from exc


def outbox_message_id(settings: EmailSettings, row: OutboxRow) -> str:
    """The Message-ID of an outbox row's mail, the same on every attempt: a mail sent again after its sending was
    never recorded is the same message to the servers and clients that drop duplicates by Message-ID. The row's
    creation time keeps two installs' rows with one id apart."""
    domain = make_msgid(domain=settings.message_domain).rsplit("@", 1)[1].rstrip(">")
    return f"<faa.outbox.{row.id}.{int(row.created_at.timestamp() * 1_000_000)}@{domain}>"


class EmailSender:
    """The `ReplySender` for channel "email"."""

    def __init__(self, settings: EmailSettings, *, load_media: LoadMedia, load_thread: LoadThread) -> None:
        self.settings = settings
        self.relay = SmtpRelay(settings)
        self.load_media = load_media
        self.load_thread = load_thread

    async def send(self, row: OutboxRow) -> None:
        thread: Mapping[str, Any] = row.payload.get("thread") or {}
        if not thread and row.inbox_id is not None:
            thread = await self.load_thread(row.household_id, row.inbox_id)
        images = [await self.load_media(row.household_id, int(m)) for m in row.payload.get("media_ids", [])]
        msg = compose(
            self.settings,
            to=row.recipient,
            text=row.text,
            thread=thread,
            kind=str(row.payload.get("kind", "reply")),
            options=[str(option) for option in row.payload.get("options", [])],
            images=images,
            message_id=outbox_message_id(self.settings, row),
        )
        await self.relay.send(msg)
        log.info("email.reply.sent", outbox_id=row.id, threaded=bool(thread.get("message_id")))


def thread_loader(db: Database) -> LoadThread:
    """`load_thread`: the threading headers of the message a reply answers, from its inbox payload."""

    async def load_thread(household_id: int, inbox_id: int) -> Mapping[str, Any]:
        async with db.household(household_id) as conn:
            row = await inbox.get(conn, inbox_id)
        return {} if row is None else dict(row.payload.get("thread") or {})

    return load_thread
