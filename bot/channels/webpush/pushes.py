"""Which push messages a web app delivery calls for, and what they say.

When a row on the web channel (a reply, a reminder, a digest, a budget alert) has been delivered to a member with no
page of the web app open, each browser they turned push on in gets a push message: an outbox row of its own, queued
in the transaction that records the web row as sent, so a web row delivered twice never makes a second one
(`outbox_push_once`). A push waits for the end of the member's quiet hours.

A push shows on a lock screen, where anyone near the phone can read it, so it says little: the text of a reminder
only when the member set it themselves and it is the household's (never a private one, nor one kept from someone),
and otherwise only what kind of message waits ("FAA replied"). What it is, the app shows when opened.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from tools.infra.recurrence import quiet_until
from tools.storage import push
from tools.storage.database import Connection
from tools.storage.outbox import OutboxRow

TITLE = "FAA"
_SHOWN_CHARS = 80  # of a reminder's text

_TEXTS = {
    "en": {
        "reply": "FAA replied",
        "reminder": "Reminder: {text}",
        "reminder_hidden": "You have a reminder",
        "digest": "Your summary is ready",
        "budget_alert": "A message about your budget",
        "other": "A new message from FAA",
    },
    "de": {
        "reply": "FAA hat geantwortet",
        "reminder": "Erinnerung: {text}",
        "reminder_hidden": "Du hast eine Erinnerung",
        "digest": "Deine Zusammenfassung ist da",
        "budget_alert": "Eine Nachricht zu deinem Budget",
        "other": "Eine neue Nachricht von FAA",
    },
    "zh": {
        "reply": "FAA 已回复",
        "reminder": "提醒：{text}",
        "reminder_hidden": "你有一条提醒",
        "digest": "你的摘要已送达",
        "budget_alert": "一条关于预算的消息",
        "other": "FAA 有一条新消息",
    },
}

# Where a tap on the notification opens the app.
_PAGES = {"reply": "/", "reminder": "/reminders", "digest": "/", "budget_alert": "/money"}


@dataclass(frozen=True)
class Queued:
    outbox_id: int
    not_before: datetime | None  # None: send now; else the end of the member's quiet hours


async def queue_for(conn: Connection, row: OutboxRow, now: datetime) -> list[Queued]:
    """Queue the push messages for a web row just delivered to a member with no page open (in the transaction that
    marks it sent; acting for nobody). Nothing for a member without push, or one who was forgotten."""
    subscriptions = await push.subscriptions(conn, row.household_id, row.user_id)
    member = await push.recipient(conn, row.household_id, row.user_id) if subscriptions else None
    if member is None:
        return []
    kind = "reply" if row.inbox_id is not None else str(row.payload.get("kind", "other"))
    text = await lock_screen_text(conn, row, kind, member.locale)
    not_before = None
    if member.quiet_start is not None and member.quiet_end is not None:
        not_before = quiet_until(now, ZoneInfo(member.timezone), member.quiet_start, member.quiet_end)
    payload = {"title": TITLE, "tag": tag(row.id), "url": _PAGES.get(kind, "/"), "kind": kind}
    queued = []
    for subscription in subscriptions:
        outbox_id = await push.queue(conn, row.id, subscription, text=text, payload=payload, not_before=not_before)
        if outbox_id is not None:
            queued.append(Queued(outbox_id, not_before))
    return queued


async def lock_screen_text(conn: Connection, row: OutboxRow, kind: str, locale: str) -> str:
    texts = _TEXTS.get(locale[:2].lower(), _TEXTS["en"])
    if kind == "reminder":
        reminder_id = row.payload.get("reminder_id")
        shown = None if reminder_id is None else await push.own_reminder_text(conn, int(reminder_id), row.user_id)
        if shown is None:
            return texts["reminder_hidden"]
        return texts["reminder"].format(text=_shortened(shown))
    return texts.get(kind, texts["other"])


def tag(source_id: int) -> str:
    """The notification's tag, the same as the open page's Notification API uses for that row: a second showing of
    one message (a push sent again, or a page and a push) replaces the first instead of adding one."""
    return f"faa-{source_id}"


def body(row: OutboxRow) -> dict[str, Any]:
    """What the push carries to the service worker (encrypted end to end): title, text, tag and the page to open."""
    return {"title": row.payload.get("title", TITLE), "body": row.text, **{k: row.payload[k] for k in ("tag", "url")}}


def _shortened(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1].rstrip() + "…"
