"""Speech-to-text through any OpenAI-compatible /audio/transcriptions endpoint."""

from __future__ import annotations

import openai

from engine.errors import AttachmentError
from tools.errors import root_cause
from tools.infra.api_errors import is_transient


class OpenAITranscriber:
    def __init__(self, client: openai.AsyncOpenAI, model: str) -> None:
        self._client = client
        self._model = model

    async def transcribe(self, audio: bytes, *, mime: str, name: str) -> str:
        try:
            result = await self._client.audio.transcriptions.create(model=self._model, file=(name, audio, mime))
        except openai.APIStatusError as exc:
            raise AttachmentError(f"speech-to-text answered {exc.status_code}", transient=is_transient(exc)) from exc
        except openai.APIError as exc:
            reason = f"speech-to-text failed: {type(root_cause(exc)).__name__}"
            raise AttachmentError(reason, transient=is_transient(exc)) from exc
        return result.text.strip()

    async def close(self) -> None:
        await self._client.close()
