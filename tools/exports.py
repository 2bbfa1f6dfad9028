"""Data portability: a household's or a member's data as files — expenses and income as CSV, every memory as JSON,
reminders and events as iCalendar — for `faa export` and the web app's download (which zips them)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import zipfile
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from tools.infra.ics import IcsEvent, calendar
from tools.storage import exports
from tools.storage.database import Connection
from tools.storage.events import as_ics
from tools.storage.forgetting import FORMER_MEMBER

FILES = ("expenses.csv", "memories.json", "reminders.ics", "events.ics")


async def export_files(
    conn: Connection,
    household_id: int,
    member_id: int | None,
    *,
    viewer_id: int | None,
    timezone: str,
    now: datetime,
    name: str,
) -> dict[str, bytes]:
    """The export's files by name (see FILES), read in the caller's transaction: a household's (`member_id` None)
    or one member's data, as far as the viewer may see it (private rows only the viewer's own)."""
    memories = await exports.memories(conn, household_id, member_id, viewer_id)
    reminders = await exports.reminders(conn, household_id, member_id, viewer_id)
    events = await exports.events(conn, household_id, member_id, viewer_id)
    # Writing thousands of rows takes seconds of CPU: off the event loop.
    return await asyncio.to_thread(_files, memories, reminders, events, ZoneInfo(timezone), now, name)


def _files(
    memories: list[Any], reminders: list[Any], events: list[Any], tz: ZoneInfo, now: datetime, name: str
) -> dict[str, bytes]:
    return {
        "expenses.csv": _money_csv(memories, tz),
        "memories.json": _memories_json(memories),
        "reminders.ics": calendar(f"{name}: reminders", [_reminder(row, now) for row in reminders], stamp=now),
        "events.ics": calendar(f"{name}: events", [as_ics(row) for row in events], stamp=now),
    }


def zipped(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return out.getvalue()


def _author(row: Any) -> str:
    return FORMER_MEMBER if row["author"] is None or row["author_forgotten"] else str(row["author"])


def _money_csv(rows: list[Any], tz: ZoneInfo) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["date", "kind", "category", "what", "amount", "currency", "member"])
    for row in rows:
        if row["amount"] is None:
            continue
        understanding = _understanding(row)
        writer.writerow(
            [
                row["occurred_at"].astimezone(tz).date().isoformat(),
                understanding.get("kind") or "",
                understanding.get("category") or "",
                _cell(row["content"]),
                str(row["amount"]),
                row["currency"],
                _author(row),
            ]
        )
    return out.getvalue().encode()


def _cell(text: str) -> str:
    """A text cell a spreadsheet shows as text: a leading =, +, - or @ would be read as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def _understanding(row: Any) -> dict[str, Any]:
    """The JSONB column as a dict (a connection without FAA's codecs returns its text)."""
    value = row["ai_understanding"]
    parsed = json.loads(value) if isinstance(value, str) else value
    return parsed if isinstance(parsed, dict) else {}


def _memories_json(rows: list[Any]) -> bytes:
    items = [
        {
            "id": row["id"],
            "content": row["content"],
            "understanding": _understanding(row),
            "amount": None if row["amount"] is None else str(row["amount"]),
            "currency": row["currency"],
            "occurred_at": row["occurred_at"].isoformat(),
            "visibility": row["visibility"],
            "author": _author(row),
            "created_at": row["created_at"].isoformat(),
        }
        for row in rows
    ]
    return json.dumps({"memories": items}, ensure_ascii=False, indent=1).encode()


def _reminder(row: Any, now: datetime) -> IcsEvent:
    """A reminder as an event at its next (or last) time; a done or cancelled one as a cancelled event."""
    at = row["next_fire_at"] or row["occurrence_at"] or row["last_fired_at"] or row["created_at"] or now
    return IcsEvent(
        uid=f"reminder-{row['id']}@faa",
        title=row["text"],
        starts_at=at,
        ends_at=None,
        all_day=False,
        timezone=row["timezone"],
        rrule=row["rrule"],
        cancelled=row["status"] != "active",
    )
