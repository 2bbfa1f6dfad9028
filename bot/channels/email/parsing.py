"""Raw MIME to what the engine needs: who wrote, the new text, the attachments and the threading headers.

Standard library only (`email.policy.default`). Mail in the wild is often broken: charsets are missing,
mislabelled or unknown, boundaries do not match, headers are malformed. Parsing never raises on such input;
it recovers the best text it can and leaves the decision about a message without a sender to the caller.

Messages forwarded as attachments (message/rfc822, the parts of a multipart/digest) are content the member
means us to read: their sender, subject and body follow the member's own text, marked as forwarded, within a
depth and a size.
"""

from __future__ import annotations

import base64
import email
import email.policy
import hashlib
import quopri
import re
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from email.utils import getaddresses

from bot.channels.email.bodies import ATTACHED_MESSAGES, MIME_ERRORS, body, decode
from bot.channels.email.quotes import is_forward, new_text, tidy

_JOIN = re.compile(r"^\s*join\s+([a-z0-9][a-z0-9 -]{3,40}?)\s*[.!]?\s*$", re.IGNORECASE)
_REPLY_PREFIX = re.compile(r"^\s*(?:(?:re|aw|sv|antw|答复|回复|fwd?|wg)\s*(?:\[\d+\])?\s*[:：]\s*)+", re.IGNORECASE)
_MESSAGE_ID = re.compile(r"<[^<>\s]+>")
_FORWARD_DEPTH = 3  # a forward of a forward of a forward; deeper ones are named, not read
_FORWARD_CHARS = 20_000  # of all forwarded text together: a long newsletter must not crowd out the member


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
    references: tuple[str, ...]  # the thread's ids up to the parent, for our reply's References (RFC 5322 3.6.4)
    in_reply_to: str | None  # the Message-ID this message answers
    text: str  # what the sender wrote now, then the messages they forwarded as attachments
    join_code: str | None
    files: tuple[MailFile, ...]
    automatic: bool  # an auto-reply, bounce or list mail: never answered (mail loops)


def parse(raw: bytes) -> ParsedEmail:
    """Parse one message; see the module docstring for what happens to broken input."""
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    subject = tidy(_header(msg, "Subject").replace("\n", " "))
    body_part, body_text = body(msg)
    text = body_text if is_forward(subject) else new_text(body_text)
    join_code = _join_code(subject, text)
    text = "\n\n".join(filter(None, [text, *_forwarded(msg)]))
    if not text and not is_forward(subject):
        text = _REPLY_PREFIX.sub("", subject).strip()
    message_id, has_id = _message_id(msg, raw)
    references, in_reply_to = _thread(msg)
    return ParsedEmail(
        sender=_sender(msg),
        message_id=message_id,
        has_message_id=has_id,
        subject=subject,
        references=references,
        in_reply_to=in_reply_to,
        text=text,
        join_code=join_code,
        files=tuple(_files(msg, body_part)),
        automatic=_automatic(msg),
    )


def _header(msg: Message, name: str) -> str:
    try:
        value = msg.get(name)
    except MIME_ERRORS:
        value = None
    return "" if value is None else str(value)


def _sender(msg: Message) -> str | None:
    try:
        pairs = getaddresses([_header(msg, "From")])
    except MIME_ERRORS:
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


def _thread(msg: Message) -> tuple[tuple[str, ...], str | None]:
    """(References, In-Reply-To). A parent without References but answering one message has that message as
    its References (RFC 5322 3.6.4): clients that send only In-Reply-To still keep their thread."""
    in_reply_to = _MESSAGE_ID.findall(_header(msg, "In-Reply-To"))
    parent = in_reply_to[0] if len(in_reply_to) == 1 else None
    references = tuple(_MESSAGE_ID.findall(_header(msg, "References")))
    return (references or ((parent,) if parent else ())), parent


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


def _attached_messages(part: Message) -> Iterator[Message]:
    """The messages attached to this part (message/rfc822, a multipart/digest's parts), not those inside them."""
    if part.get_content_type() in ATTACHED_MESSAGES:
        inner = part.get_payload()
        if isinstance(inner, list) and inner and isinstance(inner[0], Message):
            yield _decoded(part, inner[0])
        return
    payload = part.get_payload() if part.is_multipart() else None
    for child in payload if isinstance(payload, list) else ():
        if isinstance(child, Message):
            yield from _attached_messages(child)


def _decoded(part: Message, inner: Message) -> Message:
    """The attached message itself. RFC 2046 forbids encoding message/rfc822, but some clients base64 it; the
    parser then sees a message without headers whose body is the encoded one."""
    encoding = str(part.get("Content-Transfer-Encoding", "")).strip().lower()
    encoded = inner.get_payload()
    if encoding not in ("base64", "quoted-printable") or not isinstance(encoded, str):
        return inner
    try:
        data = base64.b64decode(encoded) if encoding == "base64" else quopri.decodestring(encoded.encode("ascii"))
    except (ValueError, UnicodeError):
        return inner
    return email.message_from_bytes(data, policy=email.policy.default)


def _forwarded(msg: Message) -> list[str]:
    """Each attached message as a block: a marker, its From, Date and Subject, then its body; what it forwarded
    follows it, down to `_FORWARD_DEPTH`. Reading stops at `_FORWARD_CHARS`, and the last block is cut there."""
    blocks: list[str] = []
    _collect(msg, 1, blocks)
    kept: list[str] = []
    room = _FORWARD_CHARS
    for block in blocks:
        if len(block) > room:
            kept.append(block[:room].rstrip() + "\n[the rest of the forwarded text was not read]")
            break
        kept.append(block)
        room -= len(block)
    return kept


def _collect(msg: Message, depth: int, blocks: list[str]) -> None:
    for inner in _attached_messages(msg):
        if sum(len(block) for block in blocks) > _FORWARD_CHARS:
            return
        if depth > _FORWARD_DEPTH:
            blocks.append("[a message forwarded inside the forwarded one was not read: too deeply nested]")
            return
        fields = [f"{name}: {value}" for name in ("From", "Date", "Subject") if (value := tidy(_header(inner, name)))]
        _, text = body(inner)
        blocks.append("\n".join(["---------- Forwarded message ----------", *fields, "", text]).strip())
        _collect(inner, depth + 1, blocks)


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
