"""The chaos benchmark's email material without FAA running: photos drawn to size, and messages FAA's own parser
reads as the member wrote them, with the photo kept byte for byte."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import _chaos_mail as mail  # noqa: E402

from bot.channels.email.parsing import parse  # noqa: E402


def test_a_noise_photo_is_as_large_as_asked() -> None:
    data = mail.noise_photo(300_000)
    assert 0.97 * 300_000 < len(data) < 1.03 * 300_000


def test_the_page_has_the_megapixels_asked_in_a_small_file() -> None:
    data = mail.page(4)
    width, height = Image.open(io.BytesIO(data)).size
    assert width * height == 4_000_000
    assert len(data) < 200_000


def test_faa_reads_the_message_and_keeps_its_photo() -> None:
    photo = mail.receipt()
    parsed = parse(mail.message("anna@family.example", "Oversized receipt by webhook", "receipt.png", photo))
    assert parsed.sender == "anna@family.example"
    assert "Oversized receipt by webhook" in parsed.text
    [file] = parsed.files
    assert (file.kind, file.mime, file.data) == ("image", "image/png", photo)
