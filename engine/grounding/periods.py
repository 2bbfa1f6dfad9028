"""Named periods a question asks about ("this month", "上个月", "letzte Woche"), as the filter language names them."""

from __future__ import annotations

import re

_PERIODS: tuple[tuple[str, str], ...] = (
    ("last_7_days", r"\b(?:last|past) (?:7|seven) days\b|最近(?:7|七)天|\bletzten (?:7|sieben) tage"),
    ("last_30_days", r"\b(?:last|past) (?:30|thirty) days\b|最近(?:30|三十)天|\bletzten (?:30|dreißig) tage"),
    ("last_month", r"\blast month\b|\bprevious month\b|上个?月|\b(?:letzten|vorigen|vergangenen) monat"),
    ("this_month", r"\bthis month\b|\bso far this month\b|这个月|本月|这月|\b(?:diesen|dieser|diesem) monat"),
    ("last_week", r"\blast week\b|\bprevious week\b|上(?:个)?(?:周|星期|礼拜)|\b(?:letzte|vorige|vergangene) woche"),
    ("this_week", r"\bthis week\b|这(?:个)?(?:周|星期|礼拜)|本周|\bdiese woche"),
    ("last_year", r"\blast year\b|去年|\b(?:letztes|voriges|vergangenes) jahr"),
    ("this_year", r"\bthis year\b|今年|\bdieses jahr"),
    ("yesterday", r"\byesterday\b|昨天|\bgestern\b"),
    ("today", r"\btoday\b|今天|\bheute\b"),
)
_COMPILED = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in _PERIODS)


def find_period(text: str) -> str | None:
    """The first named period the text mentions (the longer spans are looked for first)."""
    for name, pattern in _COMPILED:
        if pattern.search(text):
            return name
    return None
