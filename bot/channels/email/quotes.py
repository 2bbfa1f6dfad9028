"""Only the new text of a reply: quoted history, attribution lines, signatures and device footers cut off.

Mail clients append the whole conversation to every reply; the engine must see only what the member wrote
now, or it would record last week's expense again. Everything from the first history marker on is dropped;
`>` quoted lines are dropped wherever they are (inline replies keep the member's own lines between them).
"""

from __future__ import annotations

import re

# "On Mon, 3 Mar 2025 at 09:12, Anna <a@x.org> wrote:" and its siblings; clients wrap it over two or three
# lines, so it is matched against a line joined with the next two.
_ATTRIBUTION = re.compile(
    r"^(?:"
    r"On\s.{1,300}?\swrote\s*:"  # English (Gmail, Apple Mail, Thunderbird)
    r"|Am\s.{1,300}?\sschrieb\s.{0,300}?:"  # German
    r"|Le\s.{1,300}?\sa\s+écrit\s*:"  # French
    r"|El\s.{1,300}?\sescribió\s*:"  # Spanish
    r"|Op\s.{1,300}?\sschreef\s.{0,300}?:"  # Dutch
    r"|Il\s.{1,300}?\sha\s+scritto\s*:"  # Italian
    r"|Em\s.{1,300}?\sescreveu\s*:"  # Portuguese
    r"|.{0,300}?写道\s*[:：]"  # Chinese (Apple Mail, QQ Mail, Foxmail)
    r"|.{0,300}?寫道\s*[:：]"  # Traditional Chinese
    r")\s*$",
    re.IGNORECASE | re.DOTALL,
)
_ORIGINAL_MESSAGE = re.compile(
    r"^\s*-{2,}\s*(?:Original Message|Ursprüngliche Nachricht|Message d'origine|Mensaje original|"
    r"Messaggio originale|原始邮件|原始郵件)\s*-{2,}\s*$",
    re.IGNORECASE,
)
# Outlook's header block: "From: …" followed within a few lines by "Sent: …" / "Date: …" (any of the languages).
_HEADER_FROM = re.compile(r"^\s*\*?(?:From|Von|De|Da|Van|发件人|寄件者)\s*\*?\s*[:：]", re.IGNORECASE)
_HEADER_SENT = re.compile(
    r"^\s*\*?(?:Sent|Date|Gesendet|Datum|Envoyé|Enviado|Inviato|Verzonden|发送时间|日期|寄件日期)\s*\*?\s*[:：]",
    re.IGNORECASE,
)
_RULE = re.compile(r"^\s*_{8,}\s*$")
_DEVICE_FOOTER = re.compile(
    r"^\s*(?:Sent from my \S.{0,60}|Sent from (?:Mail|Outlook|Yahoo Mail)\b.{0,60}|Get Outlook for \S.{0,40}"
    r"|Von meinem \S.{0,60} gesendet|Gesendet von meinem \S.{0,60}|Envoyé de mon \S.{0,60}"
    r"|Enviado desde mi \S.{0,60}|发自我的\S.{0,40}|从我的\S.{0,40}发送|來自我的\S.{0,40})\s*$",
    re.IGNORECASE,
)
_FORWARD_SUBJECT = re.compile(r"^\s*(?:fwd?|wg|tr|rv|转发|轉寄)\s*[:：]", re.IGNORECASE)


def is_forward(subject: str) -> bool:
    """A forwarded message: its quoted part IS the content (a receipt, a school letter) and is kept."""
    return bool(_FORWARD_SUBJECT.match(subject))


def _history_starts(lines: list[str], index: int) -> bool:
    line = lines[index]
    if _ORIGINAL_MESSAGE.match(line) or line.rstrip() == "--" or _DEVICE_FOOTER.match(line):
        return True
    if _attribution_width(lines, index) and not _attribution_width(lines, index + 1):
        return True
    if _HEADER_FROM.match(line) and any(_HEADER_SENT.match(later) for later in lines[index + 1 : index + 5]):
        return True
    return bool(_RULE.match(line) and index + 1 < len(lines) and _HEADER_FROM.match(lines[index + 1]))


def _attribution_width(lines: list[str], index: int) -> int:
    """How many lines the attribution starting here spans (0: none). A line that merely starts like one
    ("On Monday I paid…") is no attribution when the real one starts on the next line."""
    if index >= len(lines) or not lines[index].strip():
        return 0
    for width in (1, 2, 3):
        window = lines[index : index + width]
        if len(window) == width and all(part.strip() for part in window):
            if _ATTRIBUTION.match(" ".join(part.strip() for part in window)):
                return width
    return 0


def new_text(body: str) -> str:
    """The part of a plain-text body the sender wrote in this message."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[str] = []
    for index, line in enumerate(lines):
        if _history_starts(lines, index):
            break
        if line.lstrip().startswith(">"):
            continue
        kept.append(line.rstrip())
    return tidy("\n".join(kept))


def tidy(text: str) -> str:
    """No trailing spaces, no runs of more than one blank line, no blank edges."""
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()
