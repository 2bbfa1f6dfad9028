"""A fake Telegram Bot API server for tests: aiogram's real session talks HTTP to it.

It records every method call (`/bot{token}/{method}`, form or multipart fields as aiogram sends them), answers
with what the real API answers (a Message for sendMessage and sendPhoto, True for actions, a File for getFile),
serves file downloads (`/file/bot{token}/{path}`), and plays queued failures (429 with retry_after, 403…):

    fake = FakeTelegram()
    base = await fake.start()
    bot = Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(base)))
    fake.fail("sendMessage", 429, "Too Many Requests: retry after 7", retry_after=7)
"""

from __future__ import annotations

import itertools
import json
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web

__all__ = ["BOT_ID", "TOKEN", "BOT_USERNAME", "Call", "FakeTelegram"]

BOT_ID = 7000001
TOKEN = f"{BOT_ID}:AAFakeTokenForTestsOnly_abcdefghijklmn"
BOT_USERNAME = "faa_family_bot"


@dataclass
class Call:
    """One Bot API request as the fake received it."""

    method: str
    fields: dict[str, str]  # JSON-encoded values (reply_markup…) stay strings; see `json`
    files: dict[str, bytes]

    def json(self, name: str) -> Any:
        return json.loads(self.fields[name])


@dataclass
class _Failure:
    status: int
    description: str
    retry_after: int | None
    after: int  # calls of the method that still succeed before this failure


class FakeTelegram:
    def __init__(self) -> None:
        self.base_url = ""
        self.calls: list[Call] = []
        self.files: dict[str, bytes] = {}  # file_id -> bytes served by getFile + download
        self._failures: dict[str, deque[_Failure]] = defaultdict(deque)
        self._message_ids = itertools.count(1000)
        self._runner: web.AppRunner | None = None

    async def start(self) -> str:
        app = web.Application(client_max_size=50 * 1024 * 1024)
        app.router.add_post("/bot{token}/{method}", self._method)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.base_url = f"http://{host}:{port}"
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def reset(self) -> None:
        self.calls.clear()
        self.files.clear()
        self._failures.clear()

    def fail(
        self, method: str, status: int, description: str, *, retry_after: int | None = None, after: int = 0
    ) -> None:
        """A call of `method` fails like the real API would: the next one, or the one after `after` successes."""
        self._failures[method].append(_Failure(status, description, retry_after, after))

    def sent(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]

    async def _method(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != TOKEN:
            return _error(401, "Unauthorized")
        method = request.match_info["method"]
        fields: dict[str, str] = {}
        files: dict[str, bytes] = {}
        for name, value in (await request.post()).items():
            if isinstance(value, web.FileField):
                files[name] = value.file.read()
            else:
                fields[name] = str(value)
        for name, value in list(fields.items()):  # aiogram names uploads "attach://<part>"
            if value.startswith("attach://") and value[9:] in files:
                files[name] = files.pop(value[9:])
        self.calls.append(Call(method, fields, files))
        queued = self._failures[method]
        if queued and queued[0].after > 0:
            queued[0].after -= 1
        elif queued:
            failure = queued.popleft()
            return _error(failure.status, failure.description, failure.retry_after)
        return web.json_response({"ok": True, "result": self._result(method, fields, files)})

    def _result(self, method: str, fields: dict[str, str], files: dict[str, bytes]) -> Any:
        if method == "getMe":
            return {"id": BOT_ID, "is_bot": True, "first_name": "FAA", "username": BOT_USERNAME}
        if method in ("sendMessage", "sendPhoto"):
            chat_id = int(fields["chat_id"])
            message: dict[str, Any] = {
                "message_id": next(self._message_ids),
                "date": int(time.time()),
                "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"},
                "from": {"id": BOT_ID, "is_bot": True, "first_name": "FAA", "username": BOT_USERNAME},
            }
            if method == "sendMessage":
                message["text"] = fields.get("text", "")
            else:
                message["photo"] = [{"file_id": "sent-photo", "file_unique_id": "u-sent", "width": 800, "height": 600}]
            return message
        if method == "getFile":
            file_id = fields["file_id"]
            if file_id not in self.files:
                return {"file_id": file_id, "file_unique_id": f"u-{file_id}"}
            return {
                "file_id": file_id,
                "file_unique_id": f"u-{file_id}",
                "file_size": len(self.files[file_id]),
                "file_path": f"photos/{file_id}.jpg",
            }
        return True  # setWebhook, sendChatAction, sendMessageDraft, answerCallbackQuery, editMessageReplyMarkup…

    async def _download(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != TOKEN:
            return web.Response(status=401)
        path = request.match_info["path"]
        file_id = path.removeprefix("photos/").removesuffix(".jpg")
        if file_id not in self.files:
            return web.Response(status=404)
        return web.Response(body=self.files[file_id], content_type="image/jpeg")


def _error(status: int, description: str, retry_after: int | None = None) -> web.Response:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return web.json_response(body, status=status)
