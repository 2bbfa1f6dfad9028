"""The text of a message's body: which part is the body, and how its bytes become text.

The part: text/plain, then HTML (through `markup`), then any other text/* subtype read as plain text (RFC 2046
4.1.4: an unrecognised text subtype is treated as text/plain); never a part of a message attached to this one.
The bytes: the declared charset or its common superset, UTF-8 hidden behind a Latin-1 label, and a replacing
decode as the last resort. A multipart whose boundaries never match is salvaged line by line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from email.message import EmailMessage, Message

from bot.channels.email.markup import html_to_text
from bot.channels.email.quotes import tidy

# Errors the email package raises on malformed headers and parts (it has no single root).
MIME_ERRORS = (ValueError, IndexError, AttributeError, TypeError, LookupError, UnicodeError, AssertionError)
ATTACHED_MESSAGES = frozenset({"message/rfc822", "message/global"})

# A declared charset that is commonly a smaller name for what was really sent.
_SUPERSETS = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "euc-cn": "gb18030",
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "us-ascii": "utf-8",
    "ascii": "utf-8",
    "ks_c_5601-1987": "cp949",
    "big5": "big5hkscs",
    "shift_jis": "cp932",
}
_MIME_NOISE = re.compile(r"^(?:--[^\s]{6,}(?:--)?|Content-[\w-]+:.*|MIME-Version:.*|\s+boundary=.*)$", re.IGNORECASE)


def decode(data: bytes, declared: str | None) -> str:
    """Text of a part whatever its label says: the declared charset (or its common superset), UTF-8 when a
    single-byte label hides valid UTF-8, and a replacing decode as the last resort."""
    label = (declared or "").strip().strip('"').lower()
    charset = _SUPERSETS.get(label, label)
    if charset in ("cp1252", "utf-8") or not charset:
        try:
            return data.decode("utf-8")  # valid UTF-8 with non-ASCII bytes is almost never meant as Latin-1
        except UnicodeDecodeError:
            pass
    for attempt in (charset, "utf-8"):
        try:
            return data.decode(attempt) if attempt else data.decode("utf-8")
        except (LookupError, UnicodeDecodeError):
            continue
    try:
        return data.decode(charset, errors="replace")
    except LookupError:
        return data.decode("cp1252", errors="replace")


def _part_text(part: Message) -> str:
    data = part.get_payload(decode=True)
    if isinstance(data, bytes):
        return decode(data, part.get_content_charset())
    payload = part.get_payload()
    return payload if isinstance(payload, str) else ""


def body(msg: Message) -> tuple[Message | None, str]:
    """The preferred body part and its text: text/plain, then HTML, then any other text/* read as plain text
    (RFC 2046 4.1.4: an unrecognised text subtype is treated as text/plain)."""
    part: Message | None = None
    if isinstance(msg, EmailMessage):
        try:
            part = msg.get_body(preferencelist=("plain", "html"))
        except MIME_ERRORS:
            part = None
    if part is None:
        part = next((p for p in _own_parts(msg) if p.get_content_maintype() == "text" and not _attached(p)), None)
    if part is None and not msg.is_multipart() and msg.get_content_maintype() == "text":
        part = msg
    if part is None:
        return None, _salvage(msg)
    text = _part_text(part)
    if part.get_content_subtype() == "html":
        text = html_to_text(text)
    return part, tidy(text)


def _salvage(msg: Message) -> str:
    """Text from a multipart whose boundaries never match: the parser leaves it as one string."""
    payload = msg.get_payload()
    if not isinstance(payload, str):
        return ""
    kept = [line for line in payload.replace("\r\n", "\n").split("\n") if not _MIME_NOISE.match(line)]
    return tidy("\n".join(kept))


def _attached(part: Message) -> bool:
    return (part.get_content_disposition() or "").lower() == "attachment"


def _own_parts(msg: Message) -> Iterator[Message]:
    """The leaf parts of this message, not those of the messages attached to it."""
    if msg.get_content_type() in ATTACHED_MESSAGES:
        return
    if not msg.is_multipart():
        yield msg
        return
    payload = msg.get_payload()
    for part in payload if isinstance(payload, list) else ():
        if isinstance(part, Message):
            yield from _own_parts(part)
