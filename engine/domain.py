"""Domain types that cross the engine's boundary: a message in, a reply out."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Outcome = Literal["answered", "clarifying", "degraded", "failed"]


@dataclass(frozen=True)
class Attachment:
    """A photo, voice note or file that came with a message. The adapter stores what it can cheaply at intake
    (bytes it already has go to `media`); what must be downloaded is named by `ref` and fetched by the worker."""

    kind: str  # "image", "voice", "file", "text"
    mime: str = ""
    text: str | None = None  # already extracted text, if any
    media_id: int | None = None  # bytes stored in the media table
    ref: str | None = None  # a channel's own handle (Telegram file_id, Threema blob id…) for its AttachmentFetcher
    name: str | None = None  # the file name, when the channel gives one


@dataclass(frozen=True)
class InboundMessage:
    inbox_id: int
    household_id: int
    user_id: int
    channel: str
    external_id: str
    text: str
    trace_id: str
    received_at: datetime
    attachments: tuple[Attachment, ...] = ()
    stream: bool = False
    reply_to: str | None = None  # where the channel sends the answer (a chat, an address); None: the member
    shared: bool = False  # said where others read along (a group chat): private memories stay out of it
    chat: str = ""  # the conversation it was said in: a question FAA asks back waits there for its answer

    @classmethod
    def from_payload(
        cls,
        *,
        inbox_id: int,
        household_id: int,
        user_id: int,
        channel: str,
        external_id: str,
        text: str,
        trace_id: str,
        received_at: datetime,
        payload: dict[str, Any],
    ) -> InboundMessage:
        return cls(
            inbox_id=inbox_id,
            household_id=household_id,
            user_id=user_id,
            channel=channel,
            external_id=external_id,
            text=text,
            trace_id=trace_id,
            received_at=received_at,
            attachments=tuple(Attachment(**a) for a in payload.get("attachments", ())),
            stream=bool(payload.get("stream", False)),
            reply_to=str(payload["reply_to"]) if payload.get("reply_to") else None,
            shared=bool(payload.get("shared", False)),
            # A channel whose replies go to one place per conversation names no chat: that place is the chat.
            chat=f"{channel}:{payload.get('chat') or payload.get('reply_to') or ''}",
        )


@dataclass(frozen=True)
class Reply:
    text: str
    outcome: Outcome
    options: tuple[str, ...] = ()  # quick-reply buttons where the channel has them
    media_ids: tuple[int, ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "options": list(self.options), "media_ids": list(self.media_ids)}


def finished_status(outcome: str | None) -> str:
    """The inbox status of a message once its reply (with this outcome) is written."""
    return "failed" if outcome == "failed" else "done"
