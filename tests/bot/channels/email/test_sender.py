"""Replies through an SMTP relay: threading headers, options, charts, and what a relay refusal means."""

from __future__ import annotations

from typing import Any

import pytest

from bot.channels.email.sender import EmailSender, references, reply_subject
from engine.errors import DeliveryError
from tests.bot.channels.email.conftest import SmtpPeer, _free_port, email_settings
from tests.fakes.outbox_rows import outbox_row
from tools.storage.outbox import OutboxRow

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
THREAD = {
    "message_id": "<child@client.example>",
    "references": ["<root.faa@family.example>", "<mid@client.example>"],
    "subject": "Re: RE: Groceries",
}


def row(text: str = "Saved 35.50 EUR for groceries.", **payload: Any) -> OutboxRow:
    return outbox_row("email", "anna@client.example", text, row_id=7, inbox_id=3, payload=payload)


def sender(peer: SmtpPeer, **settings: object) -> EmailSender:
    async def load_media(household_id: int, media_id: int) -> tuple[str, bytes]:
        assert (household_id, media_id) == (1, 42)
        return "image/png", PNG

    async def load_thread(household_id: int, inbox_id: int) -> dict[str, Any]:
        assert (household_id, inbox_id) == (1, 3)
        return THREAD

    return EmailSender(email_settings(peer, **settings), load_media=load_media, load_thread=load_thread)


async def test_a_reply_is_threaded_under_the_members_message(smtp_peer: SmtpPeer) -> None:
    await sender(smtp_peer).send(row(options=["groceries (EUR)", "fuel (EUR)"], media_ids=[42]))

    [received] = await smtp_peer.wait_for(1)
    msg = received.message
    assert received.recipients == ["anna@client.example"] and received.sender == "faa@family.example"
    assert msg["In-Reply-To"] == "<child@client.example>"
    assert msg["References"].split() == ["<root.faa@family.example>", "<mid@client.example>", "<child@client.example>"]
    assert msg["Subject"] == "Re: Groceries"
    assert msg["Message-ID"].endswith("@family.example>") and msg["Message-ID"] != msg["In-Reply-To"]
    assert msg["Auto-Submitted"] == "auto-replied"
    body = msg.get_body(preferencelist=("plain",))
    assert body is not None
    assert body.get_content().splitlines()[:1] == ["Saved 35.50 EUR for groceries."]
    assert "1. groceries (EUR)\n2. fuel (EUR)" in body.get_content().replace("\r\n", "\n")
    [chart] = list(msg.iter_attachments())
    assert chart.get_content_type() == "image/png" and chart.get_content() == PNG


async def test_a_reminder_without_a_parent_starts_its_own_thread(smtp_peer: SmtpPeer) -> None:
    reminder = row("Take the bins out", kind="reminder", options=["Snooze 15 min", "Done"])
    await sender(smtp_peer).send(reminder.__class__(**{**reminder.__dict__, "inbox_id": None}))
    [received] = await smtp_peer.wait_for(1)
    assert received.message["Subject"] == "Reminder" and received.message["In-Reply-To"] is None


async def test_every_attempt_at_one_outbox_row_is_the_same_message(smtp_peer: SmtpPeer) -> None:
    """A row sent again (its first sending was never recorded) keeps its Message-ID, by which mail servers and
    clients drop the duplicate; another row gets another."""
    reply = row()
    await sender(smtp_peer).send(reply)
    await sender(smtp_peer).send(reply)
    await sender(smtp_peer).send(reply.__class__(**{**reply.__dict__, "id": 8}))
    first, again, another = (received.message["Message-ID"] for received in await smtp_peer.wait_for(3))
    assert first == again != another
    assert first.startswith("<faa.outbox.7.") and first.endswith("@family.example>")


@pytest.mark.parametrize(("answer", "permanent"), [("550 5.1.1 No such user", True), ("451 4.3.0 Try later", False)])
async def test_relay_refusals_are_permanent_for_5xx_and_retryable_for_4xx(
    smtp_peer: SmtpPeer, answer: str, permanent: bool
) -> None:
    smtp_peer.answer = answer
    with pytest.raises(DeliveryError) as caught:
        await sender(smtp_peer).send(row())
    assert caught.value.transient is not permanent
    assert smtp_peer.messages == []


async def test_an_unreachable_relay_is_retryable(smtp_peer: SmtpPeer) -> None:
    with pytest.raises(DeliveryError) as caught:
        await sender(smtp_peer, relay_port=_free_port()).send(row())
    assert caught.value.transient


@pytest.mark.parametrize(
    ("parent", "expected"),
    [("Groceries", "Re: Groceries"), ("Re: Re: AW: Groceries", "Re: Groceries"), ("", "Message from FAA")],
)
def test_reply_subject_has_exactly_one_re(parent: str, expected: str) -> None:
    assert reply_subject(parent) == expected


async def test_a_parent_with_in_reply_to_but_no_references_keeps_the_thread(smtp_peer: SmtpPeer) -> None:
    parent = {"message_id": "<child@client.example>", "in_reply_to": "<q-1.faa@family.example>", "references": []}

    async def load_thread(household_id: int, inbox_id: int) -> dict[str, Any]:
        return {**parent, "subject": "Re: Bins"}

    async def load_media(household_id: int, media_id: int) -> tuple[str, bytes]:
        raise AssertionError("no media")

    await EmailSender(email_settings(smtp_peer), load_media=load_media, load_thread=load_thread).send(row())
    [received] = await smtp_peer.wait_for(1)
    assert received.message["In-Reply-To"] == "<child@client.example>"
    assert received.message["References"].split() == ["<q-1.faa@family.example>", "<child@client.example>"]


@pytest.mark.parametrize(
    ("thread", "expected"),
    [
        ({"message_id": "<p@x>"}, ["<p@x>"]),
        (
            {"message_id": "<p@x>", "references": ["<r@x>", "<s@x>"], "in_reply_to": "<s@x>"},
            ["<r@x>", "<s@x>", "<p@x>"],
        ),
        ({"message_id": "<p@x>", "references": [], "in_reply_to": "<s@x>"}, ["<s@x>", "<p@x>"]),
    ],
)
def test_references_are_the_parents_references_and_its_message_id(thread: dict, expected: list[str]) -> None:
    assert references(thread) == expected
