"""An .ics attachment by email: its events join the household's calendar (once, by UID) and the reply says what was
imported, without a model call."""

from __future__ import annotations

import email.utils
from datetime import datetime
from email.message import EmailMessage

import icalendar

from tests.bot.channels.email.conftest import FAA_ADDRESS, SmtpPeer, signed
from tests.bot.channels.email.test_webhook import link, mail_system, post  # noqa: F401  (mail_system: a fixture)
from tests.system import System, make_family
from tests.tools.test_events import GARBAGE_START


def invitation(sender: str, data: bytes | None = None) -> bytes:
    cal = icalendar.Calendar()
    cal.add("prodid", "-//club//EN")
    cal.add("version", "2.0")
    event = icalendar.Event()
    event.add("uid", "match-7@club.example")
    event.add("summary", "Football match")
    event.add("dtstart", datetime(2031, 5, 3, 10, 0))
    event.add("dtstamp", datetime(2031, 1, 1))
    cal.add_component(event)
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = FAA_ADDRESS
    msg["Subject"] = "Match on Saturday"
    msg["Message-ID"] = email.utils.make_msgid(domain="client.example")
    msg.set_content("Please put this in our calendar.")
    msg.add_attachment(
        cal.to_ical() if data is None else data, maintype="text", subtype="calendar", filename="match.ics"
    )
    return msg.as_bytes()


async def test_an_ics_attachment_is_imported_once(mail_system: System, smtp_peer: SmtpPeer) -> None:  # noqa: F811
    family = await make_family(mail_system.admin, "Mail calendar", {"Anna": "Europe/Berlin"})
    await link(mail_system, smtp_peer, family, "Anna", "anna@calendar.example")
    calls = len(mail_system.llm.requests)

    for count in (2, 3):
        response = await post(mail_system, signed(invitation("anna@calendar.example")))
        assert response.status == 200
        await smtp_peer.wait_for(count)
    replies = [m.message.get_content().strip() for m in smtp_peer.to("anna@calendar.example")][1:]
    assert replies == [
        "Calendar match.ics: 1 new, 0 updated, 0 unchanged. Football match",
        "Calendar match.ics: 0 new, 0 updated, 1 unchanged.",
    ]
    row = await mail_system.admin.fetchrow("SELECT * FROM events WHERE household_id = $1", family.household_id)
    assert (row["title"], row["timezone"], row["member_id"]) == ("Football match", "Europe/Berlin", None)
    assert len(mail_system.llm.requests) == calls


async def test_a_broken_ics_attachment_gets_a_polite_reply(mail_system: System, smtp_peer: SmtpPeer) -> None:  # noqa: F811
    """A start time that is garbage: the member hears which event could not be read; the message is answered."""
    family = await make_family(mail_system.admin, "Mail broken calendar", {"Anna": "Europe/Berlin"})
    await link(mail_system, smtp_peer, family, "Anna", "anna@broken-calendar.example")

    response = await post(mail_system, signed(invitation("anna@broken-calendar.example", GARBAGE_START)))
    assert response.status == 200
    await smtp_peer.wait_for(2)
    reply = [m.message.get_content().strip() for m in smtp_peer.to("anna@broken-calendar.example")][-1]
    assert reply.startswith("Calendar match.ics") and 'the event "Sports day" has a date or value' in reply
    status = await mail_system.admin.fetchval(
        "SELECT status FROM inbox WHERE household_id = $1 AND channel = 'email' ORDER BY id DESC LIMIT 1",
        family.household_id,
    )
    assert status == "done"
