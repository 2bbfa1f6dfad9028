"""The reply field of a JSON answer read as it arrives in pieces: only its text, decoded, whatever the cut."""

from __future__ import annotations

import json

import pytest

from engine import reply_field
from engine.llm_types import StreamEvent

TEXTS = [
    "I can remember expenses, notes and plans, and remind you.",
    'She said "hi" \\ then left.\nNew line\ttab',
    "Schön, dass du fragst — 你好！😀 ok",
]


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
@pytest.mark.parametrize("ascii_only", [True, False])
def test_the_field_text_is_decoded_whatever_the_pieces(text: str, size: int, ascii_only: bool) -> None:
    # Other fields before and after it, with a decoy key inside a value and a nested object.
    raw = json.dumps(
        {"mood": 'the "reply": "no"', "nested": {"reply": "not this"}, "reply": text, "after": "x"},
        ensure_ascii=ascii_only,
    )
    field = reply_field.FieldText("reply")
    parts = [field.feed(piece) for piece in pieces(raw, size)]
    assert "".join(parts) == text
    assert all("\\u" not in part and "\ud83d" not in part for part in parts)  # never half an escape


def test_a_field_that_never_comes_gives_nothing() -> None:
    field = reply_field.FieldText("reply")
    assert field.feed(json.dumps({"other": "reply", "list": ["reply", {"reply": "x"}]})) == ""


async def test_the_sink_passes_the_field_text_on_and_starts_again_after_a_fallback() -> None:
    received: list[StreamEvent] = []

    async def events(event: StreamEvent) -> None:
        received.append(event)

    emit = reply_field.sink(events, "reply")
    for piece in ['{"re', 'ply": "Hel', 'lo"', "}"]:
        await emit(StreamEvent("content_delta", {"text": piece}))
    await emit(StreamEvent("error", {"message": "connection error", "fallback": True}))
    await emit(StreamEvent("content_delta", {"text": '{"reply": "Hello again"}'}))
    await emit(StreamEvent("tool_use", {"id": "1"}))

    assert [(event.type, event.data) for event in received] == [
        ("content_delta", {"text": "Hel"}),
        ("content_delta", {"text": "lo"}),
        ("error", {"message": "connection error", "fallback": True}),
        ("content_delta", {"text": "Hello again"}),
        ("tool_use", {"id": "1"}),
    ]
