"""The webhook over HTTP: forged, malformed and oversize requests leave nothing behind; real updates reach the
inbox once; strangers get one notice; groups are answered only when they address the bot."""

from __future__ import annotations

import json

from tests.bot.channels.telegram import updates
from tests.bot.channels.telegram.conftest import SECRET, inbox_rows, link, post
from tests.fakes.telegram_server import BOT_ID, BOT_USERNAME, FakeTelegram
from tests.system import System, make_family
from tools.storage import identities


async def telegram_rows(gate: System) -> int:
    return int(await gate.admin.fetchval("SELECT count(*) FROM inbox WHERE channel = 'telegram'"))


async def test_a_missing_or_wrong_secret_is_refused_and_nothing_is_stored(
    gate: System, fake_telegram: FakeTelegram
) -> None:
    family = await make_family(gate.admin, "Secret", {"Anna": "Europe/Berlin"})
    anna = await link(gate, family, "Anna")
    before = await telegram_rows(gate)
    for secret in (None, "", "wrong-secret", SECRET[:-1], SECRET + "x"):
        response = await post(gate, updates.message(anna, "I spent 5 euros on bread"), secret=secret)
        assert response.status == 401
    assert await telegram_rows(gate) == before
    assert fake_telegram.calls == []


async def test_malformed_and_oversize_bodies_are_refused_and_nothing_is_stored(gate: System) -> None:
    family = await make_family(gate.admin, "Malformed", {"Anna": "Europe/Berlin"})
    anna = await link(gate, family, "Anna")
    before = await telegram_rows(gate)
    good = updates.message(anna, "hello")
    no_id = {"message": good["message"]}
    bad_chat = {"update_id": updates.new_id(), "message": {**good["message"], "chat": "nope"}}
    for body in (b"{not json", b"[]", b"null", json.dumps(no_id).encode(), json.dumps(bad_chat).encode()):
        response = await post(gate, body)
        assert response.status == 400, body
    huge = {**good, "update_id": updates.new_id()}
    huge["message"] = {**good["message"], "text": "x" * (gate.deps.settings.web.max_body_bytes + 10)}
    response = await post(gate, json.dumps(huge).encode())
    assert response.status == 413
    assert await telegram_rows(gate) == before


async def test_update_types_we_do_not_handle_are_acknowledged_and_ignored(
    gate: System, fake_telegram: FakeTelegram
) -> None:
    family = await make_family(gate.admin, "Edits", {"Anna": "Europe/Berlin"})
    anna = await link(gate, family, "Anna")
    edited = updates.message(anna, "edited text")
    edited["edited_message"] = {**edited.pop("message"), "edit_date": 1700000100}
    future = {"update_id": updates.new_id(), "some_update_from_a_future_api": {"x": 1}}
    sticker = updates.message(
        anna,
        None,
        sticker={
            "file_id": "CAAC",
            "file_unique_id": "AgAD",
            "type": "regular",
            "width": 512,
            "height": 512,
            "is_animated": False,
            "is_video": False,
        },
    )
    for update in (edited, future, sticker):
        response = await post(gate, update)
        assert response.status == 200
    assert await inbox_rows(gate, anna) == []
    assert fake_telegram.sent("sendMessage") == []


async def test_a_redelivered_update_makes_one_inbox_row(gate: System) -> None:
    family = await make_family(gate.admin, "Dupes", {"Anna": "Europe/Berlin"})
    anna = await link(gate, family, "Anna")
    update = updates.message(anna, "I spent 12 euros on bread")
    for _ in range(3):
        response = await post(gate, update)
        assert response.status == 200
    rows = await inbox_rows(gate, anna)
    assert len(rows) == 1
    row = rows[0]
    assert row["text"] == "I spent 12 euros on bread" and row["user_id"] == family.user_ids["Anna"]
    assert row["external_id"] == f"{BOT_ID}:{update['update_id']}"
    payload = json.loads(row["payload"]) if isinstance(row["payload"], str) else row["payload"]
    assert payload["reply_to"] == str(anna) and payload["chat_type"] == "private"


async def test_a_stranger_gets_one_notice_through_the_bot_api_and_nothing_is_stored(
    gate: System, fake_telegram: FakeTelegram
) -> None:
    stranger = updates.new_id()
    before = await telegram_rows(gate)
    for text in ("hi, who are you?", "hello??", "/start"):
        response = await post(gate, updates.message(stranger, text))
        assert response.status == 200
    notices = fake_telegram.sent("sendMessage")
    assert len(notices) == 1
    assert notices[0].fields["chat_id"] == str(stranger) and "/start <code>" in notices[0].fields["text"]
    assert await telegram_rows(gate) == before
    assert gate.llm.requests == []


async def test_start_with_an_invite_code_links_the_sender(gate: System, fake_telegram: FakeTelegram) -> None:
    family = await make_family(gate.admin, "Joiners", {"Tom": "Europe/Berlin"})
    code = await identities.create_invite(gate.admin, family.household_id, family.user_ids["Tom"])
    tom = updates.new_id()

    response = await post(gate, updates.message(tom, f"/start {code}"))
    assert response.status == 200
    welcome = fake_telegram.sent("sendMessage")
    assert len(welcome) == 1 and "Welcome, Tom" in welcome[0].fields["text"]
    async with gate.deps.db.unscoped() as conn:
        assert await identities.resolve_identity(conn, "telegram", str(tom)) == family.principal("Tom")

    response = await post(gate, updates.message(tom, "Tom is allergic to peanuts"))
    assert response.status == 200
    assert [r["text"] for r in await inbox_rows(gate, tom)] == ["Tom is allergic to peanuts"]

    stranger = updates.new_id()
    await post(gate, updates.message(stranger, f"/start {code}"))  # the code is spent
    assert "did not work" in fake_telegram.sent("sendMessage")[-1].fields["text"]


async def test_in_the_group_only_messages_addressed_to_the_bot_are_taken(
    gate: System, fake_telegram: FakeTelegram
) -> None:
    family = await make_family(gate.admin, "Group", {"Anna": "Europe/Berlin"})
    anna = await link(gate, family, "Anna")
    group = updates.GROUP_CHAT

    chatter = await post(gate, updates.message(anna, "dinner at 7 everyone?", chat=group))
    other_bot = await post(gate, updates.message(anna, "@some_other_bot hi", chat=group))
    assert chatter.status == other_bot.status == 200
    assert await inbox_rows(gate, anna) == []

    mention = updates.message(anna, f"@{BOT_USERNAME} I spent 20 euros on pizza", chat=group)
    await post(gate, mention)
    ours = {"message_id": 4242, "from": updates.BOT_USER, "chat": group, "date": 1700000000, "text": "Saved."}
    reply = updates.message(anna, "and 3 euros tip", chat=group, reply_to_message=ours)
    await post(gate, reply)

    rows = await inbox_rows(gate, anna)
    assert [r["text"] for r in rows] == ["I spent 20 euros on pizza", "and 3 euros tip"]
    payload = rows[0]["payload"]
    payload = json.loads(payload) if isinstance(payload, str) else payload
    mention_id = mention["message"]["message_id"]
    assert payload["reply_to"] == f"{group['id']}:{mention_id}" and payload["reply_to_message_id"] == mention_id
    assert fake_telegram.sent("getMe") != []  # the username was asked from Telegram, not configured
    assert fake_telegram.sent("sendMessage") == []


async def test_photos_and_voice_notes_are_stored_as_attachment_handles(gate: System) -> None:
    family = await make_family(gate.admin, "Receipts", {"Anna": "Europe/Berlin"})
    anna = await link(gate, family, "Anna")
    await post(gate, updates.photo(anna, caption="receipt from Lidl"))
    await post(gate, updates.voice(anna))
    rows = await inbox_rows(gate, anna)
    assert [r["text"] for r in rows] == ["receipt from Lidl", ""]
    payloads = [json.loads(r["payload"]) if isinstance(r["payload"], str) else r["payload"] for r in rows]
    [image] = payloads[0]["attachments"]
    assert image["kind"] == "image" and image["ref"] == f"AgACAgQ-large-{anna}" and image["mime"] == "image/jpeg"
    [note] = payloads[1]["attachments"]
    assert note["kind"] == "voice" and note["ref"] == f"AwACAgQ-voice-{anna}" and note["mime"] == "audio/ogg"


async def test_a_pressed_button_becomes_one_message_with_the_option_text(
    gate: System, fake_telegram: FakeTelegram
) -> None:
    family = await make_family(gate.admin, "Buttons", {"Anna": "Europe/Berlin"})
    anna = await link(gate, family, "Anna")
    press = updates.button_press(anna, [("Snooze 15 min", "r:77:0"), ("Done", "r:77:1")], "r:77:1")
    for _ in range(2):  # a redelivery
        assert (await post(gate, press)).status == 200
    rows = await inbox_rows(gate, anna)
    assert [r["text"] for r in rows] == ["Done"]
    payload = rows[0]["payload"]
    payload = json.loads(payload) if isinstance(payload, str) else payload
    assert payload["answers"] == {"kind": "reminder", "reminder_id": 77}
    answered = fake_telegram.sent("answerCallbackQuery")
    assert answered and answered[0].fields["callback_query_id"] == press["callback_query"]["id"]
    assert len(fake_telegram.sent("editMessageReplyMarkup")) == 1  # the buttons go once the choice is made

    forged = updates.button_press(anna, [("Done", "r:77:1")], "r:77:1; DROP TABLE")
    assert (await post(gate, forged)).status == 200
    assert len(await inbox_rows(gate, anna)) == 1
    assert "expired" in fake_telegram.sent("answerCallbackQuery")[-1].fields["text"]
