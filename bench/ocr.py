"""OCR of receipt photos: RapidOCR as FAA runs it (`engine.ocr.RapidOCRReader`) against Tesseract.

    .venv/bin/python bench/ocr.py [--rounds 3]

Ten receipts drawn with Pillow in the fonts the tests use: English, Simplified Chinese and mixed; 560 to 1,700
pixels wide; some turned by 1-2°, blurred, noisy or saved as JPEG; items on the left, prices on the right. Figures
per engine, by language (`en`, `zh`, `mixed`):

- `char_accuracy`: 1 - character error rate against the drawn text, lines in order, NFKC, whitespace ignored;
- `tokens_found`: the share of the receipt's words and amounts found anywhere in the text, order aside;
- `s_per_image`, `cpu_s_per_image`: the median over rounds of one warm read's wall and CPU time (RapidOCR uses both
  cores, Tesseract one), averaged over the images; the engines take turns on each image, as the machine may be
  shared;
- `load_s` (RapidOCR): the first read, which imports the library and loads its models;
- `install_mb`: RapidOCR: the Python distributions `rapidocr` and `onnxruntime` bring beyond FAA's other
  dependencies; Tesseract: the Debian packages' installed size (tesseract-ocr, -eng, -chi-sim, -osd, libtesseract5,
  liblept5).

Tesseract runs as `tesseract stdin stdout -l eng+chi_sim`, one process per image, with the spaces it puts between Han
characters removed; it is left out where it is not installed (Debian: tesseract-ocr tesseract-ocr-eng
tesseract-ocr-chi-sim). The run is loopback-only: a model download would fail it.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from fontTools.ttLib import TTFont
from packaging.requirements import Requirement
from PIL import Image, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)

from engine.ocr import RapidOCRReader  # noqa: E402
from engine.settings import OCRSettings  # noqa: E402
from tests.fakes.images import CHINESE_FONT, LATIN_FONT  # noqa: E402

MONO_FONT = LATIN_FONT.replace("DejaVuSans.ttf", "DejaVuSansMono.ttf")
SERIF_FONT = LATIN_FONT.replace("DejaVuSans.ttf", "DejaVuSerif.ttf")
ENGLISH = [
    ("REWE Markt GmbH", ""),
    ("Hauptstr. 12, 10115 Berlin", ""),
    ("Milk 1L", "1.19"),
    ("Bread", "2.49"),
    ("Apples 1kg", "2.99"),
    ("Coffee 500g", "6.99"),
    ("TOTAL EUR", "13.66"),
    ("VISA **** 4242", ""),
    ("12.03.2025 18:42", ""),
]
CHINESE = [
    ("永辉超市（朝阳店）", ""),
    ("北京市朝阳区建国路88号", ""),
    ("牛奶 1升", "12.50"),
    ("面包", "8.00"),
    ("苹果 1公斤", "15.80"),
    ("鸡蛋 12个", "18.90"),
    ("合计", "55.20元"),
    ("微信支付", "55.20"),
    ("2025年3月12日 18:42", ""),
]
MIXED = [
    ("开市客 Costco 上海店", ""),
    ("Kirkland 坚果 1.13kg", "129.90"),
    ("Organic Milk 有机牛奶", "59.90"),
    ("小计 Subtotal", "189.80"),
    ("合计 TOTAL", "189.80"),
    ("支付宝 Alipay", "189.80"),
]
TESSERACT_PACKAGES = ["tesseract-ocr", "tesseract-ocr-eng", "tesseract-ocr-chi-sim", "tesseract-ocr-osd"]
TESSERACT_PACKAGES += ["libtesseract5", "liblept5"]
_HAN = r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]"
_SPACE_BETWEEN_HAN = re.compile(rf"(?<={_HAN})[ \t]+(?={_HAN})")
Reader = Callable[[bytes], Awaitable[str]]


@dataclass(frozen=True)
class Receipt:
    name: str
    language: str
    image: bytes
    lines: list[tuple[str, str]]

    @property
    def text(self) -> str:
        return "\n".join(" ".join(part for part in line if part) for line in self.lines)


def draw(
    lines: list[tuple[str, str]],
    font_path: str,
    size: int,
    width: int,
    *,
    angle: float = 0.0,
    blur: float = 0.0,
    noise: float = 0.0,
    paper: int = 255,
    jpeg: int | None = None,
) -> bytes:
    font = ImageFont.truetype(font_path, size)
    drawn = {char for left, right in lines for char in left + right if char != " "}
    missing = drawn - {chr(code) for code in TTFont(font_path).getBestCmap()}
    if missing:
        raise SystemExit(f"{font_path} has no glyphs for {''.join(sorted(missing))}")
    step = int(size * 1.6)
    image = Image.new("L", (width, 2 * size + step * len(lines)), paper)
    pen = ImageDraw.Draw(image)
    for number, (left, right) in enumerate(lines):
        pen.text((size, size + step * number), left, font=font, fill=20)
        pen.text((width - size - pen.textlength(right, font=font), size + step * number), right, font=font, fill=20)
    image = image.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=paper)
    image = image.filter(ImageFilter.GaussianBlur(blur)) if blur else image
    if noise:
        grain = np.random.default_rng(len(lines) * size).normal(0, noise, (image.height, image.width))
        image = Image.fromarray(np.clip(np.asarray(image, dtype=np.float64) + grain, 0, 255).astype(np.uint8))
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=jpeg) if jpeg else image.save(out, format="PNG")
    return out.getvalue()


def receipts() -> list[Receipt]:
    en, zh, mixed = ENGLISH, CHINESE, MIXED
    return [
        Receipt("en-clean", "en", draw(en, LATIN_FONT, 36, 1000), en),
        Receipt("en-small-blurred-jpeg", "en", draw(en, MONO_FONT, 20, 560, blur=0.6, jpeg=70), en),
        Receipt("en-turned-noisy", "en", draw(en, SERIF_FONT, 30, 900, angle=2, noise=12, paper=235), en),
        Receipt("en-photo-size", "en", draw(en, LATIN_FONT, 64, 1700, angle=-1, jpeg=85), en),
        Receipt("zh-clean", "zh", draw(zh, CHINESE_FONT, 36, 1000), zh),
        Receipt("zh-small-blurred-jpeg", "zh", draw(zh, CHINESE_FONT, 22, 600, blur=0.6, jpeg=70), zh),
        Receipt("zh-turned-noisy", "zh", draw(zh, CHINESE_FONT, 32, 900, angle=1.5, noise=12, paper=235), zh),
        Receipt("zh-photo-size-blurred", "zh", draw(zh, CHINESE_FONT, 60, 1700, angle=-2, blur=1.0, jpeg=85), zh),
        Receipt(
            "mixed-turned-noisy-jpeg", "mixed", draw(mixed, CHINESE_FONT, 32, 1000, angle=1, noise=10, jpeg=80), mixed
        ),
        Receipt("mixed-small-blurred", "mixed", draw(mixed, CHINESE_FONT, 24, 700, blur=0.8, paper=225), mixed),
    ]


def normal(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other)))
        previous = current
    return previous[-1]


def scores(receipt: Receipt, read: str) -> tuple[int, int, int, int]:
    """(edits, characters, tokens found, tokens) of one reading."""
    expected, got = normal(receipt.text), normal(read)
    tokens = [normal(token) for line in receipt.lines for part in line for token in part.split()]
    return edit_distance(expected, got), len(expected), sum(token in got for token in tokens), len(tokens)


async def tesseract(image: bytes) -> str:
    done = await asyncio.to_thread(
        subprocess.run, ["tesseract", "stdin", "stdout", "-l", "eng+chi_sim"], input=image, capture_output=True
    )
    return _SPACE_BETWEEN_HAN.sub("", done.stdout.decode(errors="replace").replace("\x0c", "")).strip()


def cpu_s() -> float:
    """CPU seconds of this process (all its threads) and of its finished children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def measure(engines: dict[str, Reader], images: list[Receipt], rounds: int) -> dict[str, dict[str, Any]]:
    """Each image read by each engine in turn, so that both see the same load on a shared machine."""
    wall: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    readings: dict[tuple[str, str], str] = {}
    for _ in range(rounds):
        for receipt in images:
            for engine, read in engines.items():
                key = (engine, receipt.name)
                started, started_cpu = time.perf_counter(), cpu_s()
                readings[key] = await read(receipt.image)
                wall.setdefault(key, []).append(time.perf_counter() - started)
                cpu.setdefault(key, []).append(cpu_s() - started_cpu)
    return {engine: _figures(engine, images, wall, cpu, readings) for engine in engines}


def _figures(
    engine: str,
    images: list[Receipt],
    wall: dict[tuple[str, str], list[float]],
    cpu: dict[tuple[str, str], list[float]],
    readings: dict[tuple[str, str], str],
) -> dict[str, Any]:
    totals: dict[str, list[int]] = {}
    for receipt in images:
        key = (engine, receipt.name)
        figures = scores(receipt, readings[key])
        h.progress(
            f"{engine} {receipt.name}: {statistics.median(wall[key]):.2f} s, (edits, chars, found, tokens) {figures}"
        )
        totals[receipt.language] = [a + b for a, b in zip(totals.get(receipt.language, [0] * 4), figures, strict=True)]
    return {
        "char_accuracy": {lang: round(1 - edits / chars, 3) for lang, (edits, chars, _, _) in totals.items()},
        "tokens_found": {lang: round(found / count, 3) for lang, (_, _, found, count) in totals.items()},
        "s_per_image": round(statistics.mean(statistics.median(wall[engine, r.name]) for r in images), 2),
        "cpu_s_per_image": round(statistics.mean(statistics.median(cpu[engine, r.name]) for r in images), 2),
    }


def python_install_mb(new: list[str]) -> float:
    """Size of the distributions that `new` need and FAA's other dependencies do not."""
    others = [Requirement(r).name for r in metadata.requires("faa") or [] if "extra ==" not in r]
    added = _closure(new) - _closure([name for name in others if name not in new])
    files = (file for name in added for file in metadata.distribution(name).files or [])
    return round(sum(Path(str(file.locate())).stat().st_size for file in files) / 1e6, 1)


def _closure(names: list[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        for spec in metadata.requires(name) or []:
            requirement = Requirement(spec)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return seen


def debian_install_mb(packages: list[str]) -> float:
    sizes = subprocess.run(["dpkg-query", "-W", "-f=${Installed-Size}\\n", *packages], capture_output=True, text=True)
    return round(sum(int(kib) for kib in sizes.stdout.split()) * 1024 / 1e6, 1)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    images = receipts()
    reader = RapidOCRReader(OCRSettings())
    engines: dict[str, Reader] = {"rapidocr": reader.read_text}
    if shutil.which("tesseract"):
        engines["tesseract"] = tesseract
    else:
        h.progress("tesseract is not installed: RapidOCR alone")
    try:
        started = time.perf_counter()
        await reader.read_text(images[0].image)
        load_s = round(time.perf_counter() - started, 2)
        result: dict[str, Any] = {"images": len(images), "rounds": args.rounds}
        result.update(await measure(engines, images, args.rounds))
    finally:
        await reader.close()
    result["rapidocr"].update(load_s=load_s, install_mb=python_install_mb(["rapidocr", "onnxruntime"]))
    result["rapidocr_version"] = metadata.version("rapidocr")
    if "tesseract" in result:
        result["tesseract"]["install_mb"] = debian_install_mb(TESSERACT_PACKAGES)
        version = subprocess.run(["tesseract", "--version"], capture_output=True, text=True).stdout.split()
        result["tesseract_version"] = version[1] if len(version) > 1 else "?"
    return result


def summary(result: dict[str, Any]) -> str:
    engines = [name for name in ("rapidocr", "tesseract") if name in result]
    return "; ".join(
        f"{name}: accuracy {result[name]['char_accuracy']}, {result[name]['s_per_image']} s per image "
        f"({result[name]['cpu_s_per_image']} s CPU)"
        for name in engines
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="reads of each image per engine; the median is reported")
    args = parser.parse_args()
    if not 1 <= args.rounds <= 20:
        parser.error("--rounds must be 1..20")
    return h.run_benchmark(run(args), summary, runner=asyncio.run)


if __name__ == "__main__":
    raise SystemExit(main())
