"""The member's reply inside a JSON answer, shown as the model writes it: a routed capability whose schema has a
field of free text for the member (small talk's `reply`) streams its call, and only that field's text, decoded,
goes on as `content_delta` events — never the JSON around it."""

from __future__ import annotations

import json
import re

from engine.llm_types import EventSink, StreamEvent

_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')
_HIGH_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}$")


class FieldText:
    """The text of one top-level string field of a JSON object that arrives in pieces, decoded as it comes:
    `feed('{"rep')` → "", `feed('ly": "Hi th')` → "Hi th", `feed('ere\\u00e9"}')` → "ereé". Strings elsewhere
    (other fields' keys and values, nested objects) are skipped; after the field's closing quote nothing more."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.reset()

    def reset(self) -> None:
        """Start again: the stream is being replaced by another answer."""
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._key: list[str] | None = None  # the key being read, at the object's top level
        self._last_key = ""
        self._after_colon = False
        self._in_field = False
        self._escape = ""  # an escape sequence of the field's text not yet complete
        self._done = False

    def feed(self, piece: str) -> str:
        """The field's text that `piece` completes."""
        out: list[str] = []
        for char in piece:
            if self._done:
                break
            if self._in_field:
                self._field_char(char, out)
            elif self._in_string:
                self._string_char(char)
            else:
                self._structure_char(char)
        return "".join(out)

    def _field_char(self, char: str, out: list[str]) -> None:
        if self._escape:
            self._escape += char
            if self._escape_complete():
                out.append(json.loads(f'"{self._escape}"'))
                self._escape = ""
        elif char == "\\":
            self._escape = char
        elif char == '"':
            self._done = True
        else:
            out.append(char)

    def _escape_complete(self) -> bool:
        """An escape that decodes on its own: `\\n`, `\\u00e9`, or a surrogate pair `\\ud83d\\ude00` whole."""
        sequence = self._escape
        if len(sequence) == 2 and sequence[1] in _SIMPLE_ESCAPES:
            return True
        if len(sequence) == 2 and sequence[1] != "u":
            self._escape = ""  # not JSON: dropped, as a stricter reader would refuse it
            return False
        if len(sequence) == 6:
            return _HIGH_SURROGATE.search(sequence) is None
        return len(sequence) == 12

    def _string_char(self, char: str) -> None:
        if self._escaped:
            self._escaped = False
        elif char == "\\":
            self._escaped = True
        elif char == '"':
            self._in_string = False
            if self._key is not None:
                self._last_key, self._key = "".join(self._key), None
            return
        if self._key is not None:
            self._key.append(char)

    def _structure_char(self, char: str) -> None:
        if char == '"':
            top = self._depth == 1
            if top and self._after_colon and self._last_key == self.name:
                self._in_field = True
                return
            self._in_string = True
            self._key = [] if top and not self._after_colon else None
        elif char in "{[":
            self._depth += 1
        elif char in "}]":
            self._depth -= 1
        elif char == ":" and self._depth == 1:
            self._after_colon = True
        elif char == "," and self._depth == 1:
            self._after_colon = False


def sink(events: EventSink, name: str) -> EventSink:
    """`events` with each `content_delta` of a JSON answer turned into the text of its field `name`; a stream that
    falls back to a plain call (an `error` with `fallback`) starts the field again."""
    text = FieldText(name)

    async def emit(event: StreamEvent) -> None:
        if event.type == "content_delta":
            piece = text.feed(str(event.data.get("text") or ""))
            if piece:
                await events(StreamEvent("content_delta", {"text": piece}))
            return
        if event.type == "error" and event.data.get("fallback"):
            text.reset()
        await events(event)

    return emit
