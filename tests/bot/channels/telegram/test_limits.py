"""Telegram files are kept by the same kind and size limits as every channel's; the member is told what was not."""

from __future__ import annotations

import json

from tests.bot.channels.telegram import updates
from tests.bot.channels.telegram.conftest import inbox_rows, link, post
from tests.fakes.telegram_server import FakeTelegram
from tests.system import System, eventually, make_family


def document(name: str, mime: str, size: int) -> dict[str, str | int]:
    return {
        "file_id": f"BQ-{name}",
        "file_unique_id": f"u-{name}",
        "file_name": name,
        "mime_type": mime,
        "file_size": size,
    }


async def test_files_over_the_limits_are_named_and_the_rest_is_taken(gate: System, fake_telegram: FakeTelegram) -> None:
    family = await make_family(gate.admin, "Telegram files", {"Anna": "Europe/Berlin"})
    anna = await link(gate, family, "Anna")
    before = len(fake_telegram.sent("sendMessage"))

    huge = document("scan.pdf", "application/pdf", 30 * 1024 * 1024)
    assert (await post(gate, updates.message(anna, None, caption="the school letter", document=huge))).status == 200
    zipped = document("photos.zip", "application/zip", 1000)
    assert (await post(gate, updates.message(anna, None, document=zipped))).status == 200

    async def both_told() -> bool:
        return len(fake_telegram.sent("sendMessage")) >= before + 2

    await eventually(both_told)
    notices = [call.fields["text"] for call in fake_telegram.sent("sendMessage")[before:]]
    assert "scan.pdf (larger than 20 MB)" in notices[0] and "photos.zip (I keep only photos" in notices[1]
    [row] = await inbox_rows(gate, anna)  # the caption is taken; the message with only a zip has nothing left
    payload = row["payload"] if isinstance(row["payload"], dict) else json.loads(row["payload"])
    assert row["text"] == "the school letter" and "attachments" not in payload
