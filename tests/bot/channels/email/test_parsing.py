"""Real-world messages from common mail clients, and broken ones: who wrote, and only the new text."""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from bot.channels.email.markup import html_to_text
from bot.channels.email.parsing import decode, parse
from bot.channels.email.quotes import new_text

MESSAGES = Path(__file__).parent / "messages"

# file -> (sender, new text)
EXPECTED = {
    "gmail.eml": ("anna.miller@gmail.com", "I spent 35.50 euros on groceries at Lidl"),
    "outlook_cp1252.eml": ("ben@outlook.com", "Paid 12,50 € at Café Müller for lunch.\n\nBest regards\nBen"),
    "outlook_german_mislabelled.eml": ("klaus@web.de", "Habe 20 € für Brötchen ausgegeben."),
    "apple_mail.eml": ("clara@icloud.com", "Here is the receipt from the pharmacy."),
    "iphone.eml": ("tom.miller@icloud.com", "Bought flowers for Oma 🌷 15 euros"),
    "chinese_gbk.eml": ("li.na@qq.com", "今天买菜花了58元，朱镕基路的超市。"),
    "html_only.eml": (
        "anna.miller@gmail.com",
        "Tom has football training every Tuesday at 17:00.\n\n- bring boots\n- bring water",
    ),
    "malformed_no_from.eml": (None, "Nobody signed this."),
    "malformed_boundary.eml": ("ben@outlook.com", "Filled the tank for 64 euros."),
    "malformed_charset.eml": ("klaus@web.de", "Zahlung 30 € für Strom erledigt."),
    "empty_body.eml": ("anna.miller@gmail.com", "Milk 2 euros"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_client_message_gives_its_sender_and_only_the_new_text(name: str) -> None:
    parsed = parse((MESSAGES / name).read_bytes())
    sender, text = EXPECTED[name]
    assert parsed.sender == sender
    assert parsed.text == text
    assert parsed.join_code is None and not parsed.automatic


def test_every_fixture_has_an_expectation() -> None:
    assert {p.name for p in MESSAGES.glob("*.eml")} == set(EXPECTED)


def test_threading_headers_are_kept() -> None:
    parsed = parse((MESSAGES / "gmail.eml").read_bytes())
    assert parsed.message_id == "<CAJx3kE8g0ZqW=8N+gmail.1@mail.gmail.com>" and parsed.has_message_id
    assert parsed.references == ("<a1b2c3.faa@family.example>",)
    assert parsed.subject == "Re: Saved 12.00 EUR for bread"
    chinese = parse((MESSAGES / "chinese_gbk.eml").read_bytes())
    assert chinese.subject == "回复：今天买了什么？"


def test_apple_mail_attachment_is_kept_with_its_bytes_and_the_html_twin_is_not_an_attachment() -> None:
    parsed = parse((MESSAGES / "apple_mail.eml").read_bytes())
    assert [(f.kind, f.mime, f.name) for f in parsed.files] == [("image", "image/jpeg", "receipt.jpg")]
    assert parsed.files[0].data.startswith(b"\xff\xd8") and parsed.files[0].data.endswith(b"\xff\xd9")


def test_a_message_without_message_id_gets_a_stable_hash_of_its_bytes() -> None:
    raw = b"From: a@b.org\r\nSubject: hi\r\n\r\nhello\r\n"
    first, again = parse(raw), parse(raw)
    assert first.message_id == again.message_id and not first.has_message_id
    assert parse(raw + b"!").message_id != first.message_id


@pytest.mark.parametrize(
    ("subject", "body", "code"),
    [
        ("JOIN ABCDE-FGHJK", "", "ABCDE-FGHJK"),
        ("Re: join abcde fghjk", "thanks", "abcde fghjk"),
        ("hello", "Join ABCDE-FGHJK\n\nSent from my iPhone", "ABCDE-FGHJK"),
        ("hello", "I want to join the club soon", None),
    ],
)
def test_join_code_in_the_subject_or_the_first_line(subject: str, body: str, code: str | None) -> None:
    raw = f"From: new@example.org\r\nSubject: {subject}\r\nMessage-ID: <j@x>\r\n\r\n{body}\r\n".encode()
    assert parse(raw).join_code == code


def test_auto_replies_and_bounces_are_marked_automatic() -> None:
    vacation = b"From: a@b.org\r\nAuto-Submitted: auto-replied\r\nSubject: Out of office\r\n\r\naway\r\n"
    bounce = b"From: MAILER-DAEMON@mx.b.org\r\nSubject: Undelivered\r\n\r\nfailed\r\n"
    human = b"From: a@b.org\r\nAuto-Submitted: no\r\nSubject: hi\r\n\r\nhello\r\n"
    assert parse(vacation).automatic and parse(bounce).automatic and not parse(human).automatic


def test_a_forward_keeps_the_forwarded_content() -> None:
    raw = (
        b"From: a@b.org\r\nSubject: Fwd: Your invoice\r\n\r\nPlease file this.\r\n\r\n"
        b"---------- Forwarded message ---------\r\nFrom: Shop <shop@x.org>\r\nDate: Mon, 3 Mar 2025\r\n\r\n"
        b"Total: 89.90 EUR\r\n"
    )
    assert "Total: 89.90 EUR" in parse(raw).text


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Yes, 20 euros.\n\nAm 03.03.2025 um 09:12 schrieb FAA <faa@x.org>:\n> Wie viel?", "Yes, 20 euros."),
        ("Oui.\n\nLe lun. 3 mars 2025 à 09:12, FAA <faa@x.org> a écrit :\n> Combien ?", "Oui."),
        ("Done\n\n-----Original Message-----\nFrom: FAA\nSent: Monday\n\nold", "Done"),
        ("Done\n\nFrom: FAA <faa@x.org>\nDate: Monday, 3 March\nSubject: x\n\nold", "Done"),
        ("好的\n\n------------------ 原始邮件 ------------------\n发件人: FAA\n", "好的"),
        ("On Monday I paid the rent.\nOn Mon, 3 Mar 2025, FAA <faa@x.org> wrote:\n> ?", "On Monday I paid the rent."),
        ("> what?\nthe bread\n> and?\nthe milk", "the bread\nthe milk"),
        ("Paid.\n\nVon meinem iPhone gesendet", "Paid."),
        ("Paid.\n--\nBen", "Paid."),
    ],
)
def test_quoted_history_and_signatures_are_cut(body: str, expected: str) -> None:
    assert new_text(body) == expected


def test_html_to_text_keeps_blocks_and_marks_quotes() -> None:
    html = "<p>Hello&nbsp;there</p><blockquote><p>old</p></blockquote><style>x{}</style><pre>a  b\nc</pre>"
    assert html_to_text(html) == "Hello there\n> old\na  b\nc"


def test_decode_prefers_utf8_hidden_behind_a_latin_label_and_never_raises() -> None:
    assert decode("Grüße".encode(), "iso-8859-1") == "Grüße"
    assert decode("Grüße".encode("cp1252"), "iso-8859-1") == "Grüße"
    assert decode("朱镕基".encode("gbk"), "gb2312") == "朱镕基"
    assert decode(b"\xff\xfe\x00bad", "no-such-charset")  # something readable, no exception


@pytest.mark.parametrize("name", ["gmail.eml", "outlook_cp1252.eml", "apple_mail.eml"])
def test_the_html_twin_of_each_client_body_gives_the_same_new_text(name: str) -> None:
    message = email.message_from_bytes((MESSAGES / name).read_bytes(), policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    html = message.get_body(preferencelist=("html",))
    assert html is not None
    charset = html.get_content_charset()
    text = html_to_text(decode(html.get_payload(decode=True), charset))
    assert new_text(text) == EXPECTED[name][1]
