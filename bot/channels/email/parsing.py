"""Raw MIME to what the engine needs: who wrote, the new text, the attachments and the threading headers.

Standard library only (`email.policy.default`). Mail in the wild is often broken: charsets are missing,
mislabelled or unknown, boundaries do not match, headers are malformed. Parsing never raises on such input;
it recovers the best text it can and leaves the decision about a message without a sender to the caller.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import re
from dataclasses import dataclass
from email.message import EmailMessage, Message
from email.utils import getaddresses

from bot.channels.email.markup import html_to_text
from bot.channels.email.quotes import is_forward, new_text, tidy

# Errors the email package raises on malformed headers and parts (it has no single root).
_MIME_ERRORS = (ValueError, IndexError, AttributeError, TypeError, LookupError, UnicodeError, AssertionError)
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
_JOIN = re.compile(r"^\s*join\s+([a-z0-9][a-z0-9 -]{3,40}?)\s*[.!]?\s*$", re.IGNORECASE)
_REPLY_PREFIX = re.compile(r"^\s*(?:(?:re|aw|sv|antw|答复|回复|fwd?|wg)\s*(?:\[\d+\])?\s*[:：]\s*)+", re.IGNORECASE)
_MESSAGE_ID = re.compile(r"<[^<>\s]+>")
_MIME_NOISE = re.compile(r"^(?:--[^\s]{6,}(?:--)?|Content-[\w-]+:.*|MIME-Version:.*|\s+boundary=.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class MailFile:
    """An attachment with its bytes: images and files go to `media`, text files become text."""

    kind: str  # "image", "voice", "file", "text"
    mime: str
    name: str | None
    data: bytes
    text: str | None = None


@dataclass(frozen=True)
class ParsedEmail:
    sender: str | None  # the From address, lower-cased; None when there is no usable one
    message_id: str  # the Message-ID with its brackets, or a hash of the raw bytes
    has_message_id: bool  # False: message_id is our hash, not something to thread replies on
    subject: str
    references: tuple[str, ...]  # the parent's References as sent, for our reply's References
    text: str  # only what the sender wrote now
    join_code: str | None
    files: tuple[MailFile, ...]
    automatic: bool  # an auto-reply, bounce or list mail: never answered (mail loops)


def parse(raw: bytes) -> ParsedEmail:
    """Parse one message; see the module docstring for what happens to broken input."""
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    subject = tidy(_header(msg, "Subject").replace("\n", " "))
    body_part, body = _body(msg)
    text = body if is_forward(subject) else new_text(body)
    join_code = _join_code(subject, text)
    if not text and not is_forward(subject):
        text = _REPLY_PREFIX.sub("", subject).strip()
    message_id, has_id = _message_id(msg, raw)
    return ParsedEmail(
        sender=_sender(msg),
        message_id=message_id,
        has_message_id=has_id,
        subject=subject,
        references=tuple(_MESSAGE_ID.findall(_header(msg, "References"))),
        text=text,
        join_code=join_code,
        files=tuple(_files(msg, body_part)),
        automatic=_automatic(msg),
    )


def _header(msg: Message, name: str) -> str:
    try:
        value = msg.get(name)
    except _MIME_ERRORS:
        value = None
    return "" if value is None else str(value)


def _sender(msg: Message) -> str | None:
    try:
        pairs = getaddresses([_header(msg, "From")])
    except _MIME_ERRORS:
        return None
    for _, address in pairs:
        address = address.strip().lower()
        if re.fullmatch(r"[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+", address):
            return address
    return None


def _message_id(msg: Message, raw: bytes) -> tuple[str, bool]:
    found = _MESSAGE_ID.search(_header(msg, "Message-ID"))
    if found and len(found.group()) <= 250:
        return found.group(), True
    return f"<sha256.{hashlib.sha256(raw).hexdigest()}@faa.invalid>", False


def _automatic(msg: Message) -> bool:
    auto = _header(msg, "Auto-Submitted").strip().lower()
    precedence = _header(msg, "Precedence").strip().lower()
    sender = (_sender(msg) or "").partition("@")[0]
    return (
        (auto not in ("", "no"))
        or precedence in ("bulk", "junk", "list", "auto_reply")
        or bool(_header(msg, "List-Id") or _header(msg, "X-Autoreply") or _header(msg, "X-Autorespond"))
        or sender in ("mailer-daemon", "postmaster")
    )


def _join_code(subject: str, text: str) -> str | None:
    first_line = next((line for line in text.split("\n") if line.strip()), "")
    for candidate in (_REPLY_PREFIX.sub("", subject), first_line):
        match = _JOIN.match(candidate)
        if match:
            return match.group(1).strip()
    return None


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


def _body(msg: Message) -> tuple[Message | None, str]:
    """The preferred body part (text/plain over HTML) and its text."""
    part: Message | None = None
    if isinstance(msg, EmailMessage):
        try:
            part = msg.get_body(preferencelist=("plain", "html"))
        except _MIME_ERRORS:
            part = None
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


def _files(msg: Message, body_part: Message | None) -> list[MailFile]:
    files: list[MailFile] = []
    for part in msg.walk():
        if part.is_multipart() or part is body_part:
            continue
        maintype = part.get_content_maintype()
        disposition = (part.get_content_disposition() or "").lower()
        if maintype == "text" and disposition != "attachment":
            continue  # the other alternative of the body (HTML beside plain text)
        if maintype in ("multipart", "message"):
            continue
        data = part.get_payload(decode=True)
        if not isinstance(data, bytes) or not data:
            continue
        name = part.get_filename()
        mime = part.get_content_type()
        if maintype == "text":
            files.append(MailFile("text", mime, name, data, text=decode(data, part.get_content_charset())))
        else:
            kind = {"image": "image", "audio": "voice"}.get(maintype, "file")
            files.append(MailFile(kind, mime, name, data))
    return files
