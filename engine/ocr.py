"""Text from photos with RapidOCR: PP-OCR models reading English and Simplified Chinese, shipped in the `rapidocr`
wheel and run by onnxruntime on the CPU, so nothing is downloaded or installed besides the Python packages."""

from __future__ import annotations

import asyncio
import contextlib
import io
import multiprocessing
import re
import resource
import signal
import struct
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import numpy as np
from PIL import Image, ImageOps

from engine.errors import AttachmentError
from engine.settings import OCRSettings

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
# What Pillow raises for bytes that are not an image it can decode, or are cut off.
# Reading processes are forked from a server process that imported OCR's libraries once (OpenCV, onnxruntime: seconds
# of CPU): a process killed with its photo is replaced in the time its models take to load. The server imports
# neither the worker's main module nor anything else of it.
_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["engine.ocr", "rapidocr"])
# How long a new reading process may take to load its models (seconds of CPU, on a busy machine more).
_START_S = 120.0
_UNDECODABLE = (OSError, ValueError, SyntaxError, struct.error, Image.DecompressionBombError)


def _load_engine() -> Any:
    from rapidocr import RapidOCR  # imports OpenCV and onnxruntime: only in the reading process

    # The library logs to stderr through its own handler; an image without text is no warning here.
    return RapidOCR(params={"Global.log_level": "error"})


class RapidOCRReader:
    """Reads photos one at a time in a process of its own, which the reader can stop: the models load there once,
    recognition (seconds of CPU on both cores) never runs in the worker, and a photo that outlives its time
    (`OCR_TIMEOUT_S`) or its CPU (`OCR_CPU_S`) ends with the process, killed; a new one starts at once for the next
    photo. One process, because onnxruntime already uses every core for one photo. `load` makes the engine in that
    process (a module-level function: tests pass their own)."""

    def __init__(self, settings: OCRSettings, *, load: Callable[[], Any] = _load_engine) -> None:
        self._settings = settings
        self._load = load
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._ready = False  # the process has loaded its models
        self._turn = asyncio.Lock()

    async def read_text(self, image: bytes) -> str:
        """The text in a PNG/JPEG/WebP/GIF/TIFF/BMP image, a line per printed line (empty when there is none)."""
        if len(image) > self._settings.max_bytes:
            raise AttachmentError(f"the image is larger than {self._settings.max_bytes} bytes")
        check_size(image, self._settings.max_pixels)  # the header only: a bomb never reaches the reading process
        async with self._turn:
            return await self._read(image)

    async def warm(self) -> None:
        """Start the reading process now (the worker's start-up): its models load before the first photo comes."""
        async with self._turn:
            await asyncio.to_thread(self._started)

    async def close(self) -> None:
        self._stop()

    async def _read(self, image: bytes) -> str:
        conn = await asyncio.to_thread(self._started)  # the first start waits for the fork server
        if not self._ready:  # its models load before the photo's clock starts: loading is not the photo's fault
            try:
                await _exchange(conn, None, _START_S)
            except (TimeoutError, EOFError, OSError):
                self._stop()
                raise AttachmentError("the photo reader did not start") from None
            self._ready = True
        try:
            kind, value = await _exchange(conn, image, self._settings.timeout_s)
        except TimeoutError:
            await self._restart()
            raise AttachmentError(f"reading the image took longer than {self._settings.timeout_s:g} s") from None
        except (EOFError, OSError):  # the process ended: its CPU limit (SIGXCPU), or killed from outside
            await self._restart()
            raise AttachmentError(f"reading the image took more than {self._settings.cpu_s:g} s of CPU") from None
        if kind == "error":
            raise AttachmentError(str(value))
        return str(value)

    def _started(self) -> Connection:
        if self._process is not None and self._conn is not None and self._process.is_alive():
            return self._conn
        self._stop()
        ours, theirs = _CONTEXT.Pipe()
        s = self._settings
        process = _CONTEXT.Process(
            target=_serve,
            args=(theirs, self._load, s.max_pixels, s.max_side, s.cpu_s),
            name="faa-ocr",
            daemon=True,
        )
        process.start()
        theirs.close()
        self._process, self._conn, self._ready = process, ours, False
        return ours

    async def _restart(self) -> None:
        """Kill the process with the photo it was reading, and start the next at once: its models load while no
        photo waits."""
        self._stop()
        await asyncio.to_thread(self._started)

    def _stop(self) -> None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()
        if process is not None:
            process.kill()
            process.join(5)
            process.close()


async def _exchange(conn: Connection, image: bytes | None, limit_s: float) -> tuple[str, Any]:
    """Send `image` (none: wait for the process's first word) and its answer, within `limit_s`."""
    loop = asyncio.get_running_loop()
    answered = asyncio.Event()
    loop.add_reader(conn.fileno(), answered.set)

    async def exchange() -> tuple[str, Any]:
        if image is not None:
            await asyncio.to_thread(conn.send_bytes, image)
        await answered.wait()
        kind, value = conn.recv()
        return str(kind), value

    try:
        return await asyncio.wait_for(exchange(), limit_s)
    finally:
        with contextlib.suppress(ValueError, OSError):  # a connection already closed
            loop.remove_reader(conn.fileno())


def _serve(conn: Connection, load: Callable[[], Any], max_pixels: int, max_side: int, cpu_s: float) -> None:
    """The reading process: one image in, ("text", str) or ("error", reason) out, until the pipe closes. Each image
    gets `cpu_s` seconds of CPU (RLIMIT_CPU counts the whole process, so the limit moves up with each image); past
    it the kernel ends the process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which closes the pipe
    engine = load()
    conn.send(("ready", None))
    while True:
        try:
            image = conn.recv_bytes()
        except (EOFError, OSError):
            return
        used = resource.getrusage(resource.RUSAGE_SELF)
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = int(used.ru_utime + used.ru_stime + cpu_s) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
        try:
            result = engine(decode(image, max_pixels, max_side))
            text = "" if result.txts is None else join_lines(result.boxes, result.txts)
            conn.send(("text", text))
        except AttachmentError as exc:
            conn.send(("error", exc.reason))


def check_size(image: bytes, max_pixels: int) -> None:
    """Refuse what is not an image, or holds more than `max_pixels`, from its header alone."""
    try:
        with Image.open(io.BytesIO(image)) as opened:
            if opened.width * opened.height > max_pixels:
                raise AttachmentError(f"the image has more than {max_pixels} pixels")
    except _UNDECODABLE as exc:
        raise AttachmentError(f"could not read the image: {str(exc)[:200]}") from None


def decode(image: bytes, max_pixels: int, max_side: int) -> np.ndarray:
    """RGB pixels, turned upright as the camera's EXIF says, any transparency laid on white, and scaled down to at
    most `max_side` pixels on the longer side: what OCR needs to read print, not what a 49-megapixel camera took (a
    JPEG is decoded at a fraction of its size to begin with)."""
    try:
        opened = Image.open(io.BytesIO(image))
        if opened.width * opened.height > max_pixels:
            raise AttachmentError(f"the image has more than {max_pixels} pixels")
        if opened.format == "JPEG":
            opened.draft("RGB", (max_side, max_side))  # a 1/2, 1/4 or 1/8 scale decode, never below max_side
        upright = ImageOps.exif_transpose(opened)
        if "A" in upright.getbands() or "transparency" in upright.info:
            upright = Image.alpha_composite(Image.new("RGBA", upright.size, "white"), upright.convert("RGBA"))
        rgb = upright.convert("RGB")
        if max(rgb.size) > max_side:
            rgb.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
        return np.asarray(rgb)
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
