"""`faa export`: a household's files (private memories left out) and one member's (theirs included), readable by
the csv, json and icalendar parsers."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import icalendar
import pytest

from tests.bot.ops.conftest import Faa


async def _family(faa: Faa, admin: asyncpg.Connection) -> dict[str, int]:
    assert await faa("household", "create", "Miller", "--timezone", "Europe/Berlin") == 0
    for name in ("Anna", "Tom"):
        assert await faa("member", "add", name, "--household", "Miller", "--timezone", "Europe/Berlin") == 0
    ids = {r["name"]: r["id"] for r in await admin.fetch("SELECT id, name FROM users")}
    household = await admin.fetchval("SELECT id FROM households")
    rows = [
        ("Anna", "Bread", '{"kind": "expense", "category": "groceries"}', "3.20", "household"),
        ("Anna", "my secret diary", '{"kind": "note"}', None, "private"),
        ("Tom", "=HYPERLINK(evil) fuel", '{"kind": "expense", "category": "fuel"}', "60", "household"),
    ]
    for author, content, understanding, amount, visibility in rows:
        await admin.execute(
            """INSERT INTO memories (household_id, author_id, content, ai_understanding, amount, currency, occurred_at,
                                     visibility)
               VALUES ($1, $2, $3, $4::jsonb, $5::numeric, CASE WHEN $5 IS NULL THEN NULL ELSE 'EUR' END, $6, $7)""",
            household,
            ids[author],
            content,
            understanding,
            amount,
            datetime(2031, 3, 10, 9, tzinfo=UTC),
            visibility,
        )
    await admin.execute(
        """INSERT INTO events (household_id, member_id, created_by, uid, title, starts_at, timezone, source)
           VALUES ($1, $2, $2, 'dentist@faa', 'Dentist', $3, 'Europe/Berlin', 'chat')""",
        household,
        ids["Anna"],
        datetime(2031, 3, 14, 14, tzinfo=UTC),
    )
    await admin.execute(
        """INSERT INTO reminders (household_id, created_by, recipient_ids, text, timezone, next_fire_at, occurrence_at,
                                  dtstart_local)
           VALUES ($1, $2, ARRAY[$2]::bigint[], 'Call grandma', 'Europe/Berlin', $3, $3, '2031-03-11 18:00')""",
        household,
        ids["Tom"],
        datetime(2031, 3, 11, 17, tzinfo=UTC),
    )
    return ids


async def test_a_household_export_and_a_members_export(
    faa: Faa, admin: asyncpg.Connection, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await _family(faa, admin)
    capsys.readouterr()
    assert await faa("export", "--household", "Miller", "--out", str(tmp_path / "all")) == 0
    assert await faa("export", "--household", "Miller", "--member", "anna", "--out", str(tmp_path / "anna")) == 0
    assert "expenses.csv" in capsys.readouterr().out

    everyone = tmp_path / "all"
    expenses = list(csv.reader(io.StringIO((everyone / "expenses.csv").read_text())))
    assert expenses == [
        ["date", "kind", "category", "what", "amount", "currency", "member"],
        ["2031-03-10", "expense", "groceries", "Bread", "3.20", "EUR", "Anna"],
        ["2031-03-10", "expense", "fuel", "'=HYPERLINK(evil) fuel", "60.00", "EUR", "Tom"],
    ]
    household_memories = json.loads((everyone / "memories.json").read_text())["memories"]
    assert [m["content"] for m in household_memories] == ["Bread", "=HYPERLINK(evil) fuel"]  # no private ones
    events = icalendar.Calendar.from_ical((everyone / "events.ics").read_bytes())
    assert [str(e.get("summary")) for e in events.walk("VEVENT")] == ["Dentist"]
    reminders = icalendar.Calendar.from_ical((everyone / "reminders.ics").read_bytes())
    [reminder] = reminders.walk("VEVENT")
    assert str(reminder.get("summary")) == "Call grandma"
    assert reminder.get("dtstart").dt == datetime(2031, 3, 11, 17, tzinfo=UTC)

    anna = tmp_path / "anna"
    mine = json.loads((anna / "memories.json").read_text())["memories"]
    assert [(m["content"], m["visibility"]) for m in mine] == [("Bread", "household"), ("my secret diary", "private")]
    assert icalendar.Calendar.from_ical((anna / "reminders.ics").read_bytes()).walk("VEVENT") == []


async def test_an_unknown_household_fails_cleanly(
    faa: Faa, admin: asyncpg.Connection, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await _family(faa, admin)
    capsys.readouterr()
    assert await faa("export", "--household", "Nobody", "--out", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert "faa:" in err and "Traceback" not in err
