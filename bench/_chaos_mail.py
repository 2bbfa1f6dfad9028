"""Email for `chaos.py`'s oversized scenario: photos drawn at run time, the messages that carry them (by the signed
Mailgun-style webhook and by SMTP), and the relay that takes FAA's replies and notices.

Nothing here is a binary file in the repository: Pillow draws every image when the scenario runs.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import math
import os
import smtplib
import threading
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.policy import SMTP as SMTP_POLICY
from typing import Any

import aiohttp
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from PIL import Image, ImageDraw, ImageFont

from tests.fakes.images import LATIN_FONT, picture

FAA_ADDRESS = "faa@family.example"
SIGNING_KEY = "chaos-bench-signing-key"
RECEIPT = ["REWE Markt GmbH", "Milk 1L      1.19", "Bread        2.49", "TOTAL EUR    3.68"]


def noise_photo(size: int) -> bytes:
    """A PNG of random pixels of about `size` bytes: noise does not compress, so the file is as large as its pixels,
    and no text is in it."""
    side = math.isqrt(size // 3)
    image = Image.frombytes("RGB", (side, side), os.urandom(side * side * 3))
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=1)
    return out.getvalue()


def page(megapixels: int = 49) -> bytes:
    """A photographed page: `megapixels` million pixels of white paper with a few lines of print (a small file)."""
    side = math.isqrt(megapixels * 1_000_000)
    image = Image.new("L", (side, side), color=255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(LATIN_FONT, side // 40)
    for number, line in enumerate(["Tenancy agreement", "Rent from 1 March: 1,250 EUR", "Signed, Berlin"]):
        draw.text((side // 10, side // 10 + number * side // 20), line, font=font, fill=0)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def receipt() -> bytes:
    return picture(RECEIPT)


def message(sender: str, text: str, name: str, data: bytes) -> bytes:
    """A plain email from `sender` to FAA with one PNG attached."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = FAA_ADDRESS
    msg["Subject"] = text
    msg["Message-ID"] = f"<{hashlib.sha256(f'{text}{time.time_ns()}'.encode()).hexdigest()[:24]}@bench.example>"
    msg.set_content(text)
    msg.add_attachment(data, maintype="image", subtype="png", filename=name)
    return msg.as_bytes(policy=SMTP_POLICY)


def signed_form(raw: bytes) -> aiohttp.FormData:
    """The form Mailgun posts for a route ending in "mime": timestamp, token, signature and the raw message."""
    stamp = str(int(time.time()))
    token = hashlib.sha256(os.urandom(16)).hexdigest()[:50]
    fields = {
        "timestamp": stamp,
        "token": token,
        "signature": hmac.new(SIGNING_KEY.encode(), f"{stamp}{token}".encode(), hashlib.sha256).hexdigest(),
        "body-mime": raw.decode("latin-1"),  # Latin-1 carries any bytes unchanged
    }
    form = aiohttp.FormData(default_to_multipart=True, charset="latin-1")
    for name, value in fields.items():
        form.add_field(name, value, content_type="text/plain; charset=latin-1")
    return form


def smtp_send(port: int, sender: str, raw: bytes) -> str:
    """Hand the message to FAA's SMTP receiver as a sending server does; the receiver's answer ("250 …", "552 …")."""
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=120) as client:
            client.sendmail(sender, [FAA_ADDRESS], raw)
    except smtplib.SMTPResponseException as exc:
        return f"{exc.smtp_code} {_text(exc.smtp_error)}"[:80]
    except smtplib.SMTPRecipientsRefused as exc:
        code, reason = next(iter(exc.recipients.values()))
        return f"{code} {_text(reason)}"[:80]
    except (smtplib.SMTPException, OSError) as exc:
        return f"error {type(exc).__name__}"
    return "250 accepted"


def _text(reason: bytes | str) -> str:
    return reason.decode(errors="replace") if isinstance(reason, bytes) else reason


@dataclass
class Relay:
    """The SMTP relay FAA sends replies and notices through: it keeps each one's recipient and In-Reply-To."""

    port: int
    sent: list[tuple[str, str]] = field(default_factory=list)  # (recipient, In-Reply-To)
    lock: threading.Lock = field(default_factory=threading.Lock)
    controller: Any = None

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:  # noqa: N802
        content = envelope.original_content or b""
        head = content.split(b"\r\n\r\n", 1)[0].decode(errors="replace")
        in_reply_to = next(
            (line.split(":", 1)[1].strip() for line in head.splitlines() if line.lower().startswith("in-reply-to:")),
            "",
        )
        with self.lock:
            self.sent.extend((str(rcpt), in_reply_to) for rcpt in envelope.rcpt_tos)
        return "250 OK"

    def start(self) -> None:
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
