"""A clock the test sets and moves: the engine, the tools and the reminder jobs all read it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class ManualClock:
    def __init__(self, start: datetime) -> None:
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def set(self, moment: datetime) -> None:
        self._now = moment.astimezone(UTC)

    def advance(self, **delta: float) -> datetime:
        self._now += timedelta(**delta)
        return self._now
