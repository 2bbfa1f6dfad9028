"""Speech-to-text through any OpenAI-compatible /audio/transcriptions endpoint."""

from __future__ import annotations

import openai

from engine.errors import AttachmentError
from engine.settings import Settings


class OpenAITranscriber:
    def __init__(self, client: openai.AsyncOpenAI, model: str) -> None:
        self._client = client
        self._model = model

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAITranscriber | None:
        """`None` when no speech model is configured: voice is then not enabled."""
        speech, llm = settings.speech, settings.llm
        if speech.model is None:
            return None
        key = speech.api_key or llm.api_key
        client = openai.AsyncOpenAI(
            base_url=speech.base_url or llm.base_url,
            api_key=key.get_secret_value() if key else "not-needed",
            timeout=speech.timeout_s,
            max_retries=llm.max_retries,
        )
        return cls(client, speech.model)

    async def transcribe(self, audio: bytes, *, mime: str, name: str) -> str:
        try:
            result = await self._client.audio.transcriptions.create(model=self._model, file=(name, audio, mime))
        except openai.APIStatusError as exc:
            raise AttachmentError(f"speech-to-text answered {exc.status_code}") from exc
        except openai.APIError as exc:
            raise AttachmentError(f"speech-to-text failed: {type(exc).__name__}") from exc
        return result.text.strip()

    async def close(self) -> None:
        await self._client.close()
