"""Text from photos with RapidOCR: PP-OCR models reading English and Simplified Chinese, shipped in the `rapidocr`
wheel and run by onnxruntime on the CPU, so nothing is downloaded or installed besides the Python packages."""

from __future__ import annotations

import asyncio
import io
import re
import struct
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from PIL import Image, ImageOps

from engine.errors import AttachmentError
from engine.settings import OCRSettings

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
# What Pillow raises for bytes that are not an image it can decode, or are cut off.
_UNDECODABLE = (OSError, ValueError, SyntaxError, struct.error, Image.DecompressionBombError)


class RapidOCRReader:
    """Reads photos one at a time in a thread of its own: the models load there on the first photo, and
    recognition (seconds of CPU on both cores) never runs on the event loop. One thread, because onnxruntime
    already uses every core for one photo; a read that outlives the timeout finishes there, blocking no one else's
    thread pool."""

    def __init__(self, settings: OCRSettings) -> None:
        self._settings = settings
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ocr")
        self._engine: Any = None  # rapidocr.RapidOCR, made in the reading thread by the first read

    async def read_text(self, image: bytes) -> str:
        """The text in a PNG/JPEG/WebP/GIF/TIFF/BMP image, a line per printed line (empty when there is none)."""
        if len(image) > self._settings.max_bytes:
            raise AttachmentError(f"the image is larger than {self._settings.max_bytes} bytes")
        reading = asyncio.get_running_loop().run_in_executor(self._thread, self._read, image)
        try:
            return await asyncio.wait_for(reading, self._settings.timeout_s)
        except TimeoutError:
            raise AttachmentError(f"reading the image took longer than {self._settings.timeout_s:g} s") from None

    async def close(self) -> None:
        self._thread.shutdown(wait=False, cancel_futures=True)

    def _read(self, image: bytes) -> str:
        pixels = decode(image, self._settings.max_pixels)
        if self._engine is None:
            self._engine = _load_engine()
        result = self._engine(pixels)
        if result.txts is None:
            return ""
        return join_lines(result.boxes, result.txts)


def _load_engine() -> Any:
    from rapidocr import RapidOCR  # imports OpenCV and onnxruntime: only in processes that read a photo

    # The library logs to stderr through its own handler; an image without text is no warning here.
    return RapidOCR(params={"Global.log_level": "error"})


def decode(image: bytes, max_pixels: int) -> np.ndarray:
    """RGB pixels, turned upright as the camera's EXIF says and any transparency laid on white."""
    try:
        opened = Image.open(io.BytesIO(image))
        if opened.width * opened.height > max_pixels:
            raise AttachmentError(f"the image has more than {max_pixels} pixels")
        upright = ImageOps.exif_transpose(opened)
        if "A" in upright.getbands() or "transparency" in upright.info:
            upright = Image.alpha_composite(Image.new("RGBA", upright.size, "white"), upright.convert("RGBA"))
        return np.asarray(upright.convert("RGB"))
    except _UNDECODABLE as exc:
        raise AttachmentError(f"could not read the image: {str(exc)[:200]}") from None


def join_lines(boxes: Sequence[Any], texts: Sequence[str]) -> str:
    """The recognised pieces as printed lines: the detector finds a receipt's item and its price as two boxes,
    and a photo taken at a slight angle makes their order ambiguous, so pieces whose centres sit on one text line
    (along the slope of the boxes) are joined left to right."""
    pieces = sorted(
        (_Piece(np.asarray(box, dtype=np.float64), text) for box, text in zip(boxes, texts, strict=True)),
        key=lambda piece: piece.y,
    )
    lines: list[list[_Piece]] = []
    for piece in pieces:
        line = next((line for line in lines if line[-1].on_my_line(piece)), None)
        if line is None:
            lines.append([piece])
        else:
            line.append(piece)
    return "\n".join(_join(sorted(line, key=lambda piece: piece.x)) for line in lines)


def _join(line: list[_Piece]) -> str:
    text = line[0].text
    for piece in line[1:]:
        both_han = _CJK.match(text[-1:]) and _CJK.match(piece.text[:1])  # Chinese is written without spaces
        text += ("" if both_han else " ") + piece.text
    return text


class _Piece:
    """One detected box (four corners, clockwise from the top left) and its text."""

    def __init__(self, corners: np.ndarray, text: str) -> None:
        self.text = text
        self.x, self.y = (float(value) for value in corners.mean(axis=0))
        top = corners[1] - corners[0]
        self.slope = float(top[1] / top[0]) if top[0] > 0 else 0.0
        self.height = float(np.linalg.norm(corners[3] - corners[0]) + np.linalg.norm(corners[2] - corners[1])) / 2

    def on_my_line(self, other: _Piece) -> bool:
        return abs(self.y + self.slope * (other.x - self.x) - other.y) < self.height / 2
