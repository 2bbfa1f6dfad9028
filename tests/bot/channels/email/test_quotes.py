"""Replies from real mail clients in many languages: only the member's new text reaches the engine, wherever it
stands around the quote, and no attribution line or quoted history comes with it."""

from __future__ import annotations

import email.utils
from email.message import EmailMessage

import pytest

from bot.channels.email.parsing import parse
from bot.channels.email.quotes import LANGUAGES, new_text
from tests.bot.channels.email.conftest import FAA_ADDRESS
from tests.bot.channels.email.replies import NOT_HISTORY, REPLIES, Reply

SUBJECT = "Re: Bakery"


def reply_mime(reply: Reply, *, html: str | None = None) -> bytes:
    """The reply as its client sends it: threaded under FAA's question, plain text (and an HTML twin)."""
    msg = EmailMessage()
    msg["From"] = "Member <member@client.example>"
    msg["To"] = FAA_ADDRESS
    msg["Subject"] = SUBJECT
    msg["Date"] = email.utils.formatdate(localtime=True)
    msg["Message-ID"] = email.utils.make_msgid(domain="client.example")
    msg["In-Reply-To"] = "<q-1.faa@family.example>"
    msg["References"] = "<q-1.faa@family.example>"
    if reply.agent:
        msg["X-Mailer"] = reply.agent
    msg.set_content(reply.body)
    if html is not None:
        msg.add_alternative(html, subtype="html")
    return msg.as_bytes()


@pytest.mark.parametrize("reply", REPLIES, ids=[r.client for r in REPLIES])
def test_each_clients_reply_gives_only_the_new_text(reply: Reply) -> None:
    parsed = parse(reply_mime(reply))
    assert parsed.text == reply.new
    assert "FAA" not in parsed.text and "faa@family.example" not in parsed.text  # no attribution, no history


def test_the_samples_cover_eleven_clients_and_every_language_of_the_table() -> None:
    clients = {r.client.split("-")[0] for r in REPLIES}
    assert len(clients) >= 11, clients
    samples = {r.client for r in REPLIES}
    for code in LANGUAGES:
        assert any(code in client.split("-") for client in samples), f"no sample in {code}"


@pytest.mark.parametrize("text", NOT_HISTORY)
def test_text_that_only_looks_like_history_is_kept(text: str) -> None:
    assert new_text(text) == text


def test_a_reply_below_the_quote_is_read_and_the_subject_is_not_taken_instead() -> None:
    reply = Reply(
        "thunderbird",
        "Mozilla Thunderbird",
        "On 03.04.24 10:15, FAA wrote:\n> Did you buy bread?\n\nYes, and milk for 1.20",
        "Yes, and milk for 1.20",
    )
    parsed = parse(reply_mime(reply))
    assert parsed.text == "Yes, and milk for 1.20"
    assert parsed.text != SUBJECT.removeprefix("Re: ")


GMAIL_BOTTOM_HTML = (
    '<div class="gmail_quote"><div dir="ltr" class="gmail_attr">On Wed, Apr 3, 2024 at 10:15\u202fAM FAA '
    '&lt;<a href="mailto:faa@family.example">faa@family.example</a>&gt; wrote:<br></div>'
    '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204)">'
    '<div dir="ltr">How much did you spend at the bakery?</div></blockquote></div>'
    '<div dir="ltr"><br></div><div>12 euros at the bakery</div>'
)
THUNDERBIRD_INLINE_HTML = (
    '<html><body><div class="moz-cite-prefix">Am 03.04.24 um 10:15 schrieb FAA:<br></div>'
    '<blockquote type="cite" cite="mid:q-1.faa@family.example">Wie viel?</blockquote>'
    "<p>20 Euro.</p>"
    '<blockquote type="cite">Und wo?</blockquote>'
    "<p>Beim Bäcker.</p></body></html>"
)
OUTLOOK_HTML = (
    '<html><body><div class="WordSection1"><p class="MsoNormal">12 Euro</p><p class="MsoNormal">&nbsp;</p>'
    '<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm">'
    '<p class="MsoNormal"><b>Von:</b> FAA &lt;faa@family.example&gt;<br><b>Gesendet:</b> Mittwoch, 3. April '
    "2024 10:15<br><b>An:</b> Klaus &lt;klaus@web.de&gt;<br><b>Betreff:</b> Bäcker</p></div>"
    '<p class="MsoNormal">Wie viel hast du beim Bäcker ausgegeben?</p></div></body></html>'
)


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        (GMAIL_BOTTOM_HTML, "12 euros at the bakery"),
        (THUNDERBIRD_INLINE_HTML, "20 Euro.\nBeim Bäcker."),
        (OUTLOOK_HTML, "12 Euro"),
    ],
    ids=["gmail-bottom", "thunderbird-inline", "outlook-de"],
)
def test_html_only_replies_keep_the_new_text_around_the_quotes(html: str, expected: str) -> None:
    msg = EmailMessage()
    msg["From"] = "member@client.example"
    msg["Subject"] = SUBJECT
    msg["Message-ID"] = "<html-1@client.example>"
    msg.set_content(html, subtype="html")
    assert parse(msg.as_bytes()).text == expected
