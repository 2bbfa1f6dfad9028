"""Step 1 — preprocess: attachments to text (photos through OCR, voice through speech-to-text), merged into the
message. Each extraction is journaled, so a retried job neither re-reads a photo nor pays for a transcript twice.

A calendar file (.ics) is not read as text: its events are imported into the household's calendar by UID (a
second import changes nothing), and what was imported is the answer."""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass
from typing import Any

import structlog

from engine import metrics
from engine.domain import Attachment
from engine.errors import AttachmentError
from engine.replies import in_locale
from engine.run import Run
from tools.events import import_events
from tools.infra import ics
from tools.storage import media

log = structlog.get_logger()

_READABLE_TEXT = ("text/plain", "text/csv", "text/markdown")
_CALENDAR_TYPES = ("text/calendar", "application/ics")


@dataclass(frozen=True)
class Preprocessed:
    text: str  # the message with what its attachments say
    unheard_voice: bool = False  # a voice note came and speech-to-text is not enabled
    calendar: tuple[str, ...] = ()  # what the calendar files that came were imported as, one line each


async def preprocess(run: Run) -> Preprocessed:
    started = time.monotonic()
    parts = [run.message.text.strip()]
    unheard = False
    calendar: list[str] = []
    for attachment in run.message.attachments:
        if is_calendar(attachment):
            imported = await run.once("calendar", functools.partial(_import_calendar, run, attachment))
            calendar.append(_imported_text(run, attachment, imported))
            continue
        if attachment.text:
            extracted: dict[str, Any] = {"text": attachment.text}
        elif _is_voice(attachment) and run.deps.speech is None:
            unheard = True
            parts.append("[voice message: speech-to-text is not enabled]")
            continue
        else:
            extracted = await run.once("extract", functools.partial(_extract, run, attachment))
        parts.append(_describe(attachment, extracted))
    text = "\n\n".join(p for p in parts if p)
    log.info(
        "step1.preprocess.completed",
        duration_ms=metrics.step_finished("preprocess", time.monotonic() - started),
        attachments=len(run.message.attachments),
    )
    return Preprocessed(text, unheard_voice=unheard and not run.message.text.strip(), calendar=tuple(calendar))


def is_calendar(attachment: Attachment) -> bool:
    return attachment.mime in _CALENDAR_TYPES or (attachment.name or "").lower().endswith(".ics")


async def _import_calendar(run: Run, attachment: Attachment) -> dict[str, Any]:
    """The events of an .ics attachment, stored in the household's calendar: counts and titles, or an error."""
    try:
        data = attachment.text.encode() if attachment.text else await _bytes(run, attachment)
        found = await asyncio.to_thread(ics.read, data, run.timezone)  # seconds for a big file: off the loop
    except (AttachmentError, ics.IcsError) as exc:
        if isinstance(exc, AttachmentError) and exc.transient and not run.final_attempt:
            raise
        reason = exc.reason if isinstance(exc, AttachmentError) else str(exc)
        run.note("calendar.unreadable", reason=reason)
        return {"error": reason}
    async with run.transaction() as conn:
        imported = await import_events(run.tool_context(conn), found, "household")
    run.note("calendar.imported", created=imported.created, updated=imported.updated, unchanged=imported.unchanged)
    return imported.model_dump()


def _imported_text(run: Run, attachment: Attachment, imported: dict[str, Any]) -> str:
    name = attachment.name or "calendar.ics"
    if "error" in imported:
        return in_locale(run, _CALENDAR_FAILED).format(name=name, reason=imported["error"])
    titles = ", ".join(imported.get("titles", []))
    text = in_locale(run, _CALENDAR_IMPORTED).format(name=name, **imported)
    return f"{text} {titles}".strip()


_CALENDAR_IMPORTED = {
    "en": "Calendar {name}: {created} new, {updated} updated, {unchanged} unchanged.",
    "de": "Kalender {name}: {created} neu, {updated} geändert, {unchanged} unverändert.",
    "zh": "日历 {name}：新增 {created} 个，更新 {updated} 个，未变 {unchanged} 个。",
}
_CALENDAR_FAILED = {
    "en": "Calendar {name} could not be imported: {reason}",
    "de": "Kalender {name} konnte nicht importiert werden: {reason}",
    "zh": "日历 {name} 无法导入：{reason}",
}


def _describe(attachment: Attachment, extracted: dict[str, Any]) -> str:
    label = attachment.kind if not attachment.name else f"{attachment.kind} {attachment.name!r}"
    if extracted.get("text"):
        return f"[{label}, text extracted]\n{extracted['text']}"
    if extracted.get("error"):
        return f"[{label}: could not be read — {extracted['error']}]"
    return f"[{label} without readable text]"


async def _extract(run: Run, attachment: Attachment) -> dict[str, Any]:
    """{"text": …} or {"error": …}: a broken attachment never fails the whole message."""
    try:
        data = await _bytes(run, attachment)
        if _is_voice(attachment):
            if run.deps.speech is None:
                raise AttachmentError("speech-to-text is not enabled")
            text = await run.deps.speech.transcribe(data, mime=attachment.mime, name=attachment.name or "voice.ogg")
        elif _is_image(attachment):
            text = await run.deps.ocr.read_text(data)
        elif attachment.mime in _READABLE_TEXT:
            text = data.decode("utf-8", errors="replace").strip()
        else:
            raise AttachmentError(f"{attachment.mime or 'this kind of file'} cannot be read yet")
    except AttachmentError as exc:
        if exc.transient and not run.final_attempt:
            raise  # the job runs again later; nothing is journaled for this attachment yet
        log.warning("step1.attachment.unreadable", kind=attachment.kind, mime=attachment.mime, reason=exc.reason)
        run.note("attachment.unreadable", kind=attachment.kind, reason=exc.reason)
        return {"error": exc.reason}
    run.note("attachment.read", kind=attachment.kind, chars=len(text))
    return {"text": text}


async def _bytes(run: Run, attachment: Attachment) -> bytes:
    if attachment.media_id is not None:
        async with run.transaction() as conn:
            stored = await media.load(conn, attachment.media_id)
        if stored is None:
            raise AttachmentError("the stored file is gone")
        return stored.data
    if attachment.ref is not None:
        fetcher = run.deps.fetchers.get(run.message.channel)
        if fetcher is None:
            raise AttachmentError(f"files from {run.message.channel} cannot be downloaded here")
        return await fetcher.fetch(attachment)
    raise AttachmentError("the attachment has no content")


def _is_voice(attachment: Attachment) -> bool:
    return attachment.kind == "voice" or attachment.mime.startswith("audio/")


def _is_image(attachment: Attachment) -> bool:
    return attachment.kind == "image" or attachment.mime.startswith("image/")
