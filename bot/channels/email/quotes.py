"""Only the new text of a reply: quoted history, attribution lines, signatures and device footers cut off.

Mail clients append the conversation to every reply; the engine must see only what the member wrote now, or it
would record last week's expense again. The member's text may stand above the quote, below it, or between quoted
blocks, so history is removed where it is rather than everything after its first sign:

- `>` quoted lines go wherever they are, and so does the attribution line that introduces them
  ("On … wrote:", "Am … schrieb …:", "在 … 写道：", "ср, 3 апр. 2024 г. в 10:15, FAA <faa@x>:");
- history that is not quoted line by line (Outlook's "-----Original Message-----" or "From: … Sent: …" block, an
  attribution followed by unquoted text, a signature, "Sent from my iPhone") ends the new text: nothing after it
  can be told apart from the old message.

The markers come from one table of languages (`LANGUAGES`) rather than one pattern per client: clients differ in
the date they put in, not in the words around it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    """How mail clients write history markers in one language; each field is a regex alternation ("" for none)."""

    opens: str  # the word an attribution begins with: "On" in "On Wed, … wrote:"
    wrote: str  # the verb it ends with, before the colon
    original: str  # the title of Outlook's separator line: "-----Original Message-----"
    sender: str  # the From field of Outlook's header block
    sent: str  # its Sent / Date field
    footer: str  # device footers: "Sent from my iPhone"


LANGUAGES: dict[str, Language] = {
    "en": Language(
        "On",
        "wrote",
        "Original Message",
        "From",
        "Sent|Date",
        r"Sent from my \S.{0,60}|Sent from (?:Mail|Outlook|Yahoo Mail)\b.{0,60}|Get Outlook for \S.{0,40}",
    ),
    "de": Language(
        "Am",
        r"schrieb(?:\s.{1,120})?",  # the name or date may follow: "Am … schrieb FAA:", "FAA schrieb am Mi., 3. Apr.:"
        "Ursprüngliche Nachricht",
        "Von",
        "Gesendet|Datum",
        r"Von meinem \S.{0,60} gesendet|Gesendet von meinem \S.{0,60}",
    ),
    "fr": Language(
        "Le",
        r"a\s+écrit",
        "Message d'origine|Message original",
        "De",
        "Envoyé|Date",
        r"Envoyé de mon \S.{0,60}",
    ),
    "es": Language("El", "escribió", "Mensaje original", "De", "Enviado|Fecha", r"Enviado desde mi \S.{0,60}"),
    "it": Language("Il", "ha scritto|scrive", "Messaggio originale", "Da", "Inviato|Data", r"Inviato da \S.{0,60}"),
    "pt": Language("Em", "escreveu", "Mensagem original", "De", "Enviada|Enviado|Data", r"Enviado do meu \S.{0,60}"),
    "nl": Language(
        "Op",
        r"schreef(?:\s.{1,120})?",
        "Oorspronkelijk bericht",
        "Van",
        "Verzonden|Datum",
        r"Verzonden (?:vanaf|met) mijn \S.{0,60}",
    ),
    "sv": Language(
        "Den",
        r"skrev(?:\s.{1,120})?",
        "Ursprungligt meddelande",
        "Från",
        "Skickat|Datum",
        r"Skickat från min \S.{0,60}",
    ),
    "pl": Language("W dniu", r"napisał(?:a|\(a\))?|pisze", "Wiadomość oryginalna", "Od", "Wysłano|Data", ""),
    "ru": Language(
        "",  # date first: "02.04.2012 14:20 пользователь … написал:"
        r"написал(?:а|\(а\))?|пишет",
        "Исходное сообщение",
        "От",
        "Отправлено|Дата",
        r"Отправлено с \S.{0,60}",
    ),
    "zh": Language(
        "在",
        "写道|寫道",
        "原始邮件|原始郵件",
        "发件人|寄件者",
        "发送时间|寄件日期|日期",
        r"发自我的\S.{0,40}|从我的\S.{0,40}发送|來自我的\S.{0,40}|寄自我的\S.{0,40}",
    ),
    "ja": Language("", "", "元のメッセージ", "差出人", "送信日時|日付", r"\S{0,40}から送信"),
    "ko": Language("", "작성", "원본 메시지", "보낸 사람", "보낸 날짜", ""),
}


def _any(field: str) -> str:
    return "|".join(getattr(language, field) for language in LANGUAGES.values() if getattr(language, field))


_COLON = r"\s*[:：]\s*$"
# The end of an attribution line: its verb and a colon ("wrote:", "a écrit :", "写道："). The verb must not be the
# tail of a longer word (CJK verbs have no spaces before them, so only letters of alphabets with spaces count).
_WROTE = re.compile(rf"(?<![A-Za-zÀ-ɏЀ-ӿ])(?:{_any('wrote')}){_COLON}", re.IGNORECASE)
# Gmail's form in Russian, Japanese and others: no verb, just the date and the address ("…, FAA <faa@x>:").
_ADDRESS_COLON = re.compile(rf"[<(\[\"]?[^\s<>()\[\]@\"]+@[^\s<>()\[\]\"]+[>)\]\"]?{_COLON}")
_OPENS = re.compile(rf"^(?:{_any('opens')})\s")
_DATE_OR_ADDRESS = re.compile(r"\d|@")
_ORIGINAL = re.compile(rf"^\s*-{{2,}}\s*(?:{_any('original')})\s*-{{2,}}\s*$", re.IGNORECASE)
_HEADER_FROM = re.compile(rf"^\s*\*?(?:{_any('sender')})\s*\*?\s*[:：]", re.IGNORECASE)
_HEADER_SENT = re.compile(rf"^\s*\*?(?:{_any('sent')})\s*\*?\s*[:：]", re.IGNORECASE)
_RULE = re.compile(r"^\s*_{8,}\s*$")
_FOOTER = re.compile(rf"^\s*(?:{_any('footer')})\s*$", re.IGNORECASE)
_FORWARD_SUBJECT = re.compile(r"^\s*(?:fwd?|wg|tr|rv|转发|轉寄)\s*[:：]", re.IGNORECASE)
_MAX_ATTRIBUTION = 300  # characters; a longer run of text is something the member wrote


def is_forward(subject: str) -> bool:
    """A forwarded message: its quoted part IS the content (a receipt, a school letter) and is kept."""
    return bool(_FORWARD_SUBJECT.match(subject))


def new_text(body: str) -> str:
    """The part of a plain-text body the sender wrote in this message, wherever it stands around the quotes."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: dict[int, str] = {}
    for index, line in enumerate(lines):
        if _unquoted_history_starts(lines, index):
            break
        attribution = _attribution(lines, index)
        if attribution is not None:
            first, certain = attribution
            quoted = _quote_follows(lines, index + 1)
            if quoted or certain:
                for earlier in range(first, index):
                    kept.pop(earlier, None)
                if quoted:
                    continue
                break  # history that is not quoted line by line: nothing after it is new
        if not _quoted(line):
            kept[index] = line.rstrip()
    return tidy("\n".join(kept.values()))


def _quoted(line: str) -> bool:
    return line.lstrip().startswith(">")


def _unquoted_history_starts(lines: list[str], index: int) -> bool:
    line = lines[index]
    if _ORIGINAL.match(line) or line.rstrip() == "--" or _FOOTER.match(line):
        return True
    if _HEADER_FROM.match(line) and any(_HEADER_SENT.match(later) for later in lines[index + 1 : index + 5]):
        return True
    return bool(_RULE.match(line) and index + 1 < len(lines) and _HEADER_FROM.match(lines[index + 1]))


def _attribution(lines: list[str], end: int) -> tuple[int, bool] | None:
    """When line `end` ends an attribution: the index of its first line and whether it is certainly one even
    without a quote below it (a verb with a date, an address or its opening word). The address-only form counts
    only above a quote: without a verb it could be anything."""
    if not re.search(r"[:：]\s*$", lines[end]) or _quoted(lines[end]):
        return None
    chosen = _choose(_blocks(lines, end))
    if chosen is None:
        return None
    first, block = chosen
    if _WROTE.search(block) is None:
        return (first, False) if re.search(r"\d", block) else None
    return first, bool(_OPENS.match(block) or _DATE_OR_ADDRESS.search(block))


def _blocks(lines: list[str], end: int) -> list[tuple[int, str]]:
    """The line `end` joined with up to two lines above it (clients wrap attributions, even inside the verb:
    "ha\nscritto:"), narrowest first, as (first line, joined text)."""
    blocks = [(end, lines[end].strip())]
    while len(blocks) < 3 and _continues(lines, blocks[-1][0] - 1, end):
        first = blocks[-1][0] - 1
        blocks.append((first, f"{lines[first].strip()} {blocks[-1][1]}"))
    return blocks


def _choose(blocks: list[tuple[int, str]]) -> tuple[int, str] | None:
    """The attribution among the blocks: the narrowest that opens with its word ("On …") and ends like one; else
    the narrowest that ends like one, with the line above when only that line holds the address (a wrapped
    "…<faa@x> 于2024年4月3日周三" / "10:15写道：")."""
    opened = next(((first, block) for first, block in blocks if _OPENS.match(block)), None)
    if opened is not None and _ends_like_attribution(opened[1]):
        return opened
    for number, (first, block) in enumerate(blocks):
        if not _ends_like_attribution(block):
            continue
        while number + 1 < len(blocks) and _unclosed(_above(blocks[number + 1][1], block)):
            number += 1  # wrapped inside the address: "пользователь "bob@x" <" / "bob@x> написал:"
            first, block = blocks[number]
        if number + 1 < len(blocks) and "@" not in block:
            above, wider = blocks[number + 1]
            if "@" in wider and not re.search(r"[.!?。！？]$", wider[: -len(block) - 1]):
                return above, wider
        return first, block
    return None


def _above(wider: str, block: str) -> str:
    """The line a wider block adds above the narrower one."""
    return wider[: -len(block) - 1]


def _unclosed(line: str) -> bool:
    """The line stops inside an address or a name: its last bracket or quote is still open."""
    return line.count("<") > line.count(">") or line.count("(") > line.count(")") or line.count('"') % 2 == 1


def _ends_like_attribution(block: str) -> bool:
    return bool(_WROTE.search(block) or _ADDRESS_COLON.search(block))


def _continues(lines: list[str], index: int, end: int) -> bool:
    """Line `index` can be the wrapped start of the attribution that ends at line `end`."""
    if index < 0 or not lines[index].strip() or _quoted(lines[index]):
        return False
    return sum(len(part.strip()) + 1 for part in lines[index : end + 1]) <= _MAX_ATTRIBUTION


def _quote_follows(lines: list[str], index: int) -> bool:
    """The next line with text is quoted (`>`): what an attribution introduces."""
    following = next((line for line in lines[index:] if line.strip()), "")
    return _quoted(following)


def tidy(text: str) -> str:
    """No trailing spaces, no runs of more than one blank line, no blank edges."""
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()
