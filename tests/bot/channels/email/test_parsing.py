"""Real-world messages from common mail clients, and broken ones: who wrote, and only the new text."""

from __future__ import annotations

import base64
import email
import email.policy
import email.utils
from email.message import EmailMessage
from pathlib import Path

import pytest

from bot.channels.email.bodies import decode
from bot.channels.email.markup import html_to_text
from bot.channels.email.parsing import parse
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


@pytest.mark.parametrize("name", ["gmail.eml", "outlook_cp1252.eml", "apple_mail.eml"])
def test_the_html_twin_of_each_client_body_gives_the_same_new_text(name: str) -> None:
    message = email.message_from_bytes((MESSAGES / name).read_bytes(), policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    html = message.get_body(preferencelist=("html",))
    assert html is not None
    charset = html.get_content_charset()
    text = html_to_text(decode(html.get_payload(decode=True), charset))
    assert new_text(text) == EXPECTED[name][1]


def forwarded(sender: str, subject: str, text: str, *, inner: EmailMessage | None = None) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = "anna.miller@gmail.com"
    msg["Subject"] = subject
    msg["Date"] = "Mon, 03 Mar 2025 10:00:00 +0100"
    msg["Message-ID"] = email.utils.make_msgid(domain="shop.example")
    msg.set_content(text)
    msg.add_alternative(f"<p>{text}</p>", subtype="html")
    if inner is not None:
        msg.add_attachment(inner)  # message/rfc822
    return msg


def outlook_forward_as_attachment(*attached: EmailMessage, note: str = "") -> bytes:
    """Outlook's "Forward as Attachment": FW: subject, an empty body (or a note), the message as message/rfc822."""
    msg = EmailMessage()
    msg["From"] = "Anna Miller <anna.miller@gmail.com>"
    msg["To"] = "faa@family.example"
    msg["Subject"] = "FW: Your invoice"
    msg["Message-ID"] = "<fw-1@client.example>"
    msg["X-Mailer"] = "Microsoft Outlook 16.0"
    msg.set_content(note)
    for inner in attached:
        msg.add_attachment(inner)
    return msg.as_bytes()


def test_a_message_forwarded_as_attachment_reaches_the_engine_with_its_text() -> None:
    invoice = forwarded("Stadtwerke <billing@stadtwerke.example>", "Your invoice", "Total due: 89.90 EUR by 15 March")
    parsed = parse(outlook_forward_as_attachment(invoice, note="Please file this."))
    assert parsed.text == (
        "Please file this.\n\n"
        "---------- Forwarded message ----------\n"
        "From: Stadtwerke <billing@stadtwerke.example>\n"
        "Date: Mon, 03 Mar 2025 10:00:00 +0100\n"
        "Subject: Your invoice\n\n"
        "Total due: 89.90 EUR by 15 March"
    )
    assert parse(outlook_forward_as_attachment(invoice)).text.startswith("---------- Forwarded message ----------")


def test_a_digest_gives_each_of_its_messages() -> None:
    raw = (
        b"From: Anna <anna.miller@gmail.com>\r\nSubject: School letters\r\nMessage-ID: <dg-1@client.example>\r\n"
        b'MIME-Version: 1.0\r\nContent-Type: multipart/digest; boundary="d"\r\n\r\n'
        b"--d\r\n\r\nFrom: school@school.example\r\nSubject: Trip\r\n\r\nThe trip costs 25 EUR.\r\n"
        b"--d\r\n\r\nFrom: school@school.example\r\nSubject: Photos\r\n\r\nPhotos are on 12 May.\r\n--d--\r\n"
    )
    text = parse(raw).text
    assert text.count("---------- Forwarded message ----------") == 2
    assert "Subject: Trip\n\nThe trip costs 25 EUR." in text and "Subject: Photos\n\nPhotos are on 12 May." in text


def test_nested_forwards_are_read_to_a_depth_and_a_size() -> None:
    nested = forwarded("level4@x.example", "Level 4", "four")
    for level in (3, 2, 1):
        nested = forwarded(f"level{level}@x.example", f"Level {level}", f"level {level} text", inner=nested)
    text = parse(outlook_forward_as_attachment(nested)).text
    assert [line for line in text.split("\n") if line.startswith("Subject:")] == [
        "Subject: Level 1",
        "Subject: Level 2",
        "Subject: Level 3",
    ]
    assert "four" not in text and "too deeply nested" in text

    huge = forwarded("news@shop.example", "Newsletter", "offer " * 10_000)
    text = parse(outlook_forward_as_attachment(huge, huge)).text
    assert len(text) < 20_500 and text.endswith("[the rest of the forwarded text was not read]")


def test_a_base64_encoded_forward_is_still_read() -> None:
    inner = b"From: shop@shop.example\r\nSubject: Receipt\r\n\r\nPaid 12.00 EUR\r\n"
    raw = (
        b"From: anna.miller@gmail.com\r\nSubject: Fwd: Receipt\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="m"\r\n\r\n'
        b"--m\r\nContent-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        + base64.encodebytes(inner)
        + b"--m--\r\n"
    )
    assert parse(raw).text.endswith("From: shop@shop.example\nSubject: Receipt\n\nPaid 12.00 EUR")


def test_in_reply_to_without_references_becomes_the_references() -> None:
    raw = (
        b"From: a@client.example\r\nSubject: Re: Bins\r\nMessage-ID: <r-2@client.example>\r\n"
        b"In-Reply-To: <q-7.faa@family.example>\r\n\r\ndone\r\n"
    )
    parsed = parse(raw)
    assert parsed.references == ("<q-7.faa@family.example>",) and parsed.in_reply_to == "<q-7.faa@family.example>"
    both = raw.replace(b"\r\n\r\n", b"\r\nReferences: <root@x> <q-7.faa@family.example>\r\n\r\n", 1)
    assert parse(both).references == ("<root@x>", "<q-7.faa@family.example>")
    several = raw.replace(b"<q-7.faa@family.example>", b"<a@x> <b@x>")
    assert parse(several).references == () and parse(several).in_reply_to is None
