"""The dependencies of one process, built once in its entrypoint and passed explicitly."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.domain import Attachment
from engine.llm_types import LLM
from engine.prompts import PromptBook
from engine.settings import Settings
from tools.infra.clock import Clock, SystemClock
from tools.infra.embeddings import Embedder
from tools.registry import ToolRegistry
from tools.storage.database import Database
from tools.storage.inbox import InboxWriter
from tools.storage.outbox import OutboxRow


class ReplySender(Protocol):
    """Delivers one outbox row on its channel."""

    async def send(self, row: OutboxRow) -> None: ...


class AttachmentFetcher(Protocol):
    """Downloads an attachment's bytes from its channel (by `Attachment.ref`), in the worker, never in a webhook."""

    async def fetch(self, attachment: Attachment) -> bytes: ...


class Transcriber(Protocol):
    """Speech to text."""

    async def transcribe(self, audio: bytes, *, mime: str, name: str) -> str: ...


class ImageReader(Protocol):
    """Text from photos (OCR); an unreadable image is an `AttachmentError`."""

    async def read_text(self, image: bytes) -> str: ...


@dataclass(frozen=True)
class Deps:
    settings: Settings
    db: Database
    llm: LLM
    embedder: Embedder
    registry: ToolRegistry
    prompts: PromptBook
    inbox: InboxWriter  # every channel's way into the inbox (group commit)
    ocr: ImageReader  # text from photos; its models load with the first photo
    redis: Any = None  # arq's ArqRedis in the worker and web processes: the job queue and live replies
    senders: Mapping[str, ReplySender] = field(default_factory=dict)
    fetchers: Mapping[str, AttachmentFetcher] = field(default_factory=dict)  # by channel
    speech: Transcriber | None = None  # None: voice messages are not enabled
    clock: Clock = field(default_factory=SystemClock)  # tests pass a clock they set
