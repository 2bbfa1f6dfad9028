"""Step 1 — preprocess: attachments to text (photos through OCR, voice through speech-to-text), merged into the
message. Each extraction is journaled, so a retried job neither re-reads a photo nor pays for a transcript twice."""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any

import structlog

from engine import metrics
from engine.domain import Attachment
from engine.errors import AttachmentError
from engine.run import Run
from tools.storage import media

log = structlog.get_logger()

_READABLE_TEXT = ("text/plain", "text/csv", "text/markdown")


@dataclass(frozen=True)
class Preprocessed:
    text: str  # the message with what its attachments say
    unheard_voice: bool = False  # a voice note came and speech-to-text is not enabled


async def preprocess(run: Run) -> Preprocessed:
    started = time.monotonic()
    parts = [run.message.text.strip()]
    unheard = False
    for attachment in run.message.attachments:
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
    return Preprocessed(text, unheard_voice=unheard and not run.message.text.strip())


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
