"""Telegram updates as Telegram sends them (JSON), for posting to the webhook."""

from __future__ import annotations

import itertools
import random
import time
from typing import Any

from tests.fakes.telegram_server import BOT_ID, BOT_USERNAME

# Update and user ids are unique across the whole test database, which outlives one test.
_ids = itertools.count(random.randrange(10**8, 9 * 10**8, 10**5))
GROUP_CHAT = {"id": -1001234567890, "title": "Miller family", "type": "supergroup"}
BOT_USER = {"id": BOT_ID, "is_bot": True, "first_name": "FAA", "username": BOT_USERNAME}


def new_id() -> int:
    return next(_ids)


def user(user_id: int, name: str = "Anna") -> dict[str, Any]:
    return {"id": user_id, "is_bot": False, "first_name": name, "last_name": "Miller", "language_code": "en"}


def private_chat(user_id: int, name: str = "Anna") -> dict[str, Any]:
    return {"id": user_id, "first_name": name, "last_name": "Miller", "type": "private"}


def _entities(text: str) -> list[dict[str, Any]]:
    entities = []
    if text.startswith("/"):
        entities.append({"offset": 0, "length": len(text.split()[0]), "type": "bot_command"})
    handle = f"@{BOT_USERNAME}"
    if handle in text:
        entities.append({"offset": text.index(handle), "length": len(handle), "type": "mention"})
    return entities


def message(
    user_id: int,
    text: str | None,
    *,
    chat: dict[str, Any] | None = None,
    update_id: int | None = None,
    message_id: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "message_id": message_id or new_id() % 100_000,
        "from": user(user_id),
        "chat": chat or private_chat(user_id),
        "date": int(time.time()),
        **extra,
    }
    if text is not None:
        body["text"] = text
        if entities := _entities(text):
            body["entities"] = entities
    return {"update_id": update_id or new_id(), "message": body}


def _size(file_id: str, size: int, width: int, height: int) -> dict[str, Any]:
    return {"file_id": file_id, "file_unique_id": f"u-{file_id}", "file_size": size, "width": width, "height": height}


def photo(user_id: int, caption: str | None = None) -> dict[str, Any]:
    sizes = [
        _size(f"AgACAgQ-small-{user_id}", 1311, 90, 67),
        _size(f"AgACAgQ-large-{user_id}", 88211, 1280, 960),
        _size(f"AgACAgQ-medium-{user_id}", 21000, 320, 240),
    ]
    extra: dict[str, Any] = {"photo": sizes}
    if caption:
        extra["caption"] = caption
    return message(user_id, None, **extra)


def voice(user_id: int) -> dict[str, Any]:
    note = {
        "file_id": f"AwACAgQ-voice-{user_id}",
        "file_unique_id": "AgADv",
        "duration": 3,
        "mime_type": "audio/ogg",
        "file_size": 7000,
    }
    return message(user_id, None, voice=note)


def button_press(
    user_id: int, options: list[tuple[str, str]], data: str, *, chat: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A pressed inline button on a message of ours that carries `options` as (label, callback data)."""
    return {
        "update_id": new_id(),
        "callback_query": {
            "id": str(new_id() * 1000 + 7),
            "from": user(user_id),
            "message": {
                "message_id": new_id() % 100_000,
                "from": BOT_USER,
                "chat": chat or private_chat(user_id),
                "date": int(time.time()),
                "text": "Which one?",
                "reply_markup": {"inline_keyboard": [[{"text": label, "callback_data": cb}] for label, cb in options]},
            },
            "chat_instance": "-8162397265713720117",
            "data": data,
        },
    }
