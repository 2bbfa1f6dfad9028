"""Threema files are kept by the same kind and size limits as every channel's; the member is told what was not."""

from __future__ import annotations

import secrets

from tests.bot.channels.threema.gateway_fake import FakeGateway
from tests.bot.channels.threema.test_callback import MakePeer, linked, post, rows
from tests.system import System


async def test_a_file_of_a_kind_not_kept_is_named_and_its_caption_taken(
    threema_web: System, gateway: FakeGateway, make_peer: MakePeer
) -> None:
    anna = await make_peer()
    await linked(threema_web, gateway, anna)
    archive = b"PK\x03\x04" + secrets.token_bytes(500)
    before = len(gateway.sent)

    captioned = anna.file(archive, "application/zip", "photos.zip", "the holiday photos")
    assert await post(threema_web, await anna.callback(captioned)) == 200
    assert await post(threema_web, await anna.callback(anna.file(archive, "application/zip", "more.zip"))) == 200

    notices = [(await anna.read(sent)).text for sent in (await gateway.wait_sent(before + 2))[before:]]
    assert "photos.zip (I keep only photos" in notices[0] and "more.zip (I keep only photos" in notices[1]
    [row] = await rows(threema_web, anna)  # the zip alone left nothing to store
    assert row["text"] == "the holiday photos" and "attachments" not in row["payload"]
