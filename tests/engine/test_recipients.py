"""Who a reminder is for: the member named next to "remind" in any of the three languages, the household when the
message says everyone, otherwise the member who wrote."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from engine.capabilities._reminders import recipient
from tools.context import Member

MEMBERS = (Member(1, "Anna", "Europe/Berlin", "en", "adult"), Member(2, "Ben", "Europe/Berlin", "en", "adult"))


def situation(text: str) -> Any:
    run = SimpleNamespace(message=SimpleNamespace(user_id=1), members=MEMBERS)
    return SimpleNamespace(text=text, run=run)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Remind Ben on Thursday at 7 to put the bins out", "Ben"),
        ("remind me to call Ben tomorrow", "self"),
        ("周六上午十点提醒Ben去修车", "Ben"),
        ("Jeden Freitag um 16 Uhr Ben an den Müll erinnern", "Ben"),
        ("Erinnere alle am Samstag um 10 Uhr: die Putzfrau kommt", "household"),
        ("alle zwei Wochen an den Müll erinnern", "self"),  # "alle zwei Wochen" is "every two weeks"
        ("remind everyone on saturday at 10 that the cleaner is coming", "household"),
        ("提醒大家明天早上八点出发", "household"),
        ("can you nudge ben at 6 to do his homework", "Ben"),
        ("sag ben heute um fünf dass er zum training muss", "Ben"),
        ("remind me to tell ben about the dentist at 5", "self"),  # the writer tells Ben
        ("erinner mich, heute abend ben zu sagen, dass er packen muss", "self"),
    ],
)
def test_recipient(text: str, expected: str) -> None:
    assert recipient(situation(text)) == expected
