"""Which files from a message FAA keeps, on every channel: by kind and by size (CHANNEL_ATTACHMENT_MAX_BYTES).

A file that is not kept is named in a short reply to the member, so nothing they sent disappears unannounced.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.channel_settings import ChannelSettings

# What the engine can read: photos (OCR, vision), voice (speech), PDFs and text (text), calendars (import).
_KEPT_MAINTYPES = ("image", "audio", "text")
_KEPT_TYPES = ("application/pdf", "application/ics", "application/octet-stream+ics")
_KEPT_SUFFIXES = (".pdf", ".ics", ".txt", ".csv", ".md")


@dataclass(frozen=True)
class Dropped:
    """A file not kept, and why, in words for the member."""

    name: str
    reason: str


def refusal(settings: ChannelSettings, mime: str, name: str | None, size: int) -> str | None:
    """Why this file is not kept (None: it is kept)."""
    maintype = mime.split("/", 1)[0].lower()
    suffix_kept = (name or "").lower().endswith(_KEPT_SUFFIXES)
    if maintype not in _KEPT_MAINTYPES and mime.lower() not in _KEPT_TYPES and not suffix_kept:
        return "I keep only photos, voice messages, PDFs, calendar and text files"
    if size > settings.attachment_max_bytes:
        return f"larger than {_megabytes(settings.attachment_max_bytes)}"
    return None


def notice(dropped: list[Dropped]) -> str:
    """The reply naming what was not kept."""
    listed = "; ".join(f"{item.name} ({item.reason})" for item in dropped)
    many = "these attachments" if len(dropped) > 1 else "this attachment"
    return f"Sorry, I could not keep {many}: {listed}. Everything else in your message reached me."


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):g} MB"
