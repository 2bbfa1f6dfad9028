"""Pictures of text, as a phone would photograph a receipt, for the OCR paths. The fonts come with the repository
and with matplotlib's wheel, so drawing needs no system font."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib
from PIL import Image, ImageDraw, ImageFont

LATIN_FONT = str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf")
CHINESE_FONT = str(Path(__file__).parent / "fonts" / "wqy-microhei-gb2312.ttf")  # common Han characters only


def picture(lines: list[str], font_path: str = LATIN_FONT, *, format: str = "PNG", angle: float = 0.0) -> bytes:
    """Black lines on white, 1000 pixels wide; `angle` turns the picture (degrees, counter-clockwise)."""
    out = io.BytesIO()
    drawing(lines, font_path).rotate(angle, expand=True, fillcolor=255).save(out, format=format)
    return out.getvalue()


def drawing(lines: list[str], font_path: str = LATIN_FONT) -> Image.Image:
    font = ImageFont.truetype(font_path, 42)
    image = Image.new("L", (1000, 90 + 70 * len(lines)), color=255)
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((40, 40 + 70 * number), line, font=font, fill=0)
    return image
