"""Text from images with Tesseract (Debian's tesseract-ocr with eng and chi_sim), run as a subprocess."""

from __future__ import annotations

import asyncio
import contextlib
import re

from engine.errors import AttachmentError
from engine.settings import OCRSettings

# Tesseract's chi_sim output separates every Han character with a space; Chinese is written without them.
_CJK = r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]"
_SPACE_BETWEEN_CJK = re.compile(rf"(?<={_CJK})[ \t]+(?={_CJK})")
_BLANK_LINES = re.compile(r"\n\s*\n+")


async def read_text(image: bytes, settings: OCRSettings) -> str:
    """The text Tesseract finds in a PNG/JPEG/TIFF/GIF image (empty when it finds none)."""
    if len(image) > settings.max_bytes:
        raise AttachmentError(f"the image is larger than {settings.max_bytes} bytes")
    try:
        process = await asyncio.create_subprocess_exec(
            "tesseract",
            "stdin",
            "stdout",
            "-l",
            settings.languages,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except FileNotFoundError:
        raise AttachmentError("tesseract is not installed (Debian: tesseract-ocr tesseract-ocr-chi-sim)") from None
    try:
        out, err = await asyncio.wait_for(process.communicate(image), settings.timeout_s)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise AttachmentError(f"reading the image took longer than {settings.timeout_s:g} s") from None
    if process.returncode != 0:
        detail = err.decode(errors="replace").strip().splitlines()[-1:] or ["no detail"]
        raise AttachmentError(f"tesseract could not read the image: {detail[0][:200]}")
    return tidy(out.decode(errors="replace"))


def tidy(text: str) -> str:
    text = _SPACE_BETWEEN_CJK.sub("", text.replace("\x0c", ""))
    lines = [line.rstrip() for line in text.splitlines()]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
