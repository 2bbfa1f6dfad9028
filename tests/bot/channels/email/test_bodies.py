"""Which part is the body and how its bytes become text: unknown text/* subtypes are read as text/plain."""

from __future__ import annotations

import email
import email.policy

import pytest

from bot.channels.email.bodies import body, decode
from bot.channels.email.parsing import parse


def message(raw: str) -> email.message.Message:
    return email.message_from_bytes(raw.replace("\n", "\r\n").encode(), policy=email.policy.default)


MARKDOWN_IN_MIXED = """From: Anna <anna@client.example>
Subject: Shopping
Message-ID: <md-1@client.example>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b1"

--b1
Content-Type: text/markdown; charset=utf-8; variant=CommonMark

# Shopping
- milk 1.20 EUR
- bread 2.50 EUR
--b1
Content-Type: image/png
Content-Disposition: attachment; filename="list.png"
Content-Transfer-Encoding: base64

iVBORw0KGgo=
--b1--
"""

ENRICHED_ALTERNATIVE = """From: Ben <ben@client.example>
Subject: Fuel
Message-ID: <en-1@client.example>
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="b2"

--b2
Content-Type: text/enriched; charset=us-ascii

Filled the tank for <bold>64 euros</bold>.
--b2
Content-Type: application/x-custom-rich

binary
--b2--
"""

UNKNOWN_SINGLE = """From: Klaus <klaus@client.example>
Subject: Strom
Message-ID: <x-1@client.example>
MIME-Version: 1.0
Content-Type: text/x-unknown-format; charset=iso-8859-15
Content-Transfer-Encoding: quoted-printable

Zahlung 30 =A4 f=FCr Strom.
"""


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (MARKDOWN_IN_MIXED, "# Shopping\n- milk 1.20 EUR\n- bread 2.50 EUR"),
        (ENRICHED_ALTERNATIVE, "Filled the tank for <bold>64 euros</bold>."),
        (UNKNOWN_SINGLE, "Zahlung 30 € für Strom."),
    ],
    ids=["markdown-in-mixed", "enriched-alternative", "unknown-single-part"],
)
def test_an_unknown_text_subtype_is_read_as_plain_text(raw: str, expected: str) -> None:
    part, text = body(message(raw))
    assert part is not None and part.get_content_maintype() == "text"
    assert text == expected
    parsed = parse(raw.replace("\n", "\r\n").encode())
    assert parsed.text == expected
    assert parsed.text != parsed.subject


def test_the_unknown_text_body_is_not_also_an_attachment_and_real_attachments_stay() -> None:
    parsed = parse(MARKDOWN_IN_MIXED.replace("\n", "\r\n").encode())
    assert [(f.kind, f.name) for f in parsed.files] == [("image", "list.png")]


def test_plain_text_still_wins_and_html_still_goes_through_markup() -> None:
    both = """From: a@client.example
Subject: x
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="b3"

--b3
Content-Type: text/x-preview

preview
--b3
Content-Type: text/html; charset=utf-8

<p>Hello&nbsp;there</p><blockquote>old</blockquote>
--b3--
"""
    part, text = body(message(both))
    assert part is not None and part.get_content_type() == "text/html"
    assert text == "Hello there\n> old"


def test_decode_prefers_utf8_hidden_behind_a_latin_label_and_never_raises() -> None:
    assert decode("Grüße".encode(), "iso-8859-1") == "Grüße"
    assert decode("Grüße".encode("cp1252"), "iso-8859-1") == "Grüße"
    assert decode("朱镕基".encode("gbk"), "gb2312") == "朱镕基"
    assert decode(b"\xff\xfe\x00bad", "no-such-charset")  # something readable, no exception
