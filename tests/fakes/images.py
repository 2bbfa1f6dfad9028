"""Pictures of text, as a phone would photograph a receipt, for the OCR paths."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont

LATIN_FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
CHINESE_FONT = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"  # Debian's fonts-wqy-microhei


def picture(lines: list[str], font_path: str = LATIN_FONT, *, format: str = "PNG") -> bytes:
    font = ImageFont.truetype(font_path, 42)
    image = Image.new("L", (1000, 90 + 70 * len(lines)), color=255)
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((40, 40 + 70 * number), line, font=font, fill=0)
    out = io.BytesIO()
    image.save(out, format=format)
    return out.getvalue()
