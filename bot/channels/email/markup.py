"""HTML mail bodies to plain text, with the standard library's HTMLParser.

Only what mail clients produce matters: blocks and line breaks become newlines, list items get a dash,
quoted history (`<blockquote>`) gets `> ` prefixes so the quote stripper treats it like a plain-text quote,
and scripts, styles and the head are dropped.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_BLOCKS = frozenset(
    "address article aside blockquote dd div dl dt fieldset figure footer form h1 h2 h3 h4 h5 h6 header hr li "
    "main nav ol p pre section table tbody thead tfoot tr ul".split()
)
_SKIPPED = frozenset({"script", "style", "head", "title", "template"})
_VOID = frozenset({"br", "hr", "img", "meta", "link", "input", "wbr", "col", "area", "base", "source"})


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.current: list[str] = []
        self.skip_depth = 0
        self.quote_depth = 0
        self.pre_depth = 0

    def _break(self, *, blank: bool = False) -> None:
        """End the current line. An empty one is kept only for `<br>` or a block holding just spaces
        (`<div>&nbsp;</div>`: how clients write a blank line), and never twice in a row."""
        raw = "".join(self.current)
        line = raw if self.pre_depth else re.sub(r"[ \t\r\f\v\u00a0]+", " ", raw).strip()
        self.current = []
        if not line and not (blank or raw):
            return
        if line or (self.lines and self.lines[-1] != ""):
            self.lines.append(("> " * self.quote_depth + line) if line else "")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.skip_depth += 1
            return
        if tag == "br":
            self._break(blank=True)
            return
        if tag in _BLOCKS:
            self._break()
        if tag == "blockquote":
            self.quote_depth += 1
        elif tag == "pre":
            self.pre_depth += 1
        elif tag == "li":
            self.current.append("- ")
        elif tag in ("td", "th") and self.current:
            self.current.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if tag in _BLOCKS:
            self._break()
        if tag == "blockquote":
            self.quote_depth = max(0, self.quote_depth - 1)
        elif tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        if self.pre_depth:
            parts = data.split("\n")
            for part in parts[:-1]:
                self.current.append(part)
                self._break()
            self.current.append(parts[-1])
        else:
            self.current.append(data.replace("\n", " "))


def html_to_text(html: str) -> str:
    """Readable text of an HTML body; never raises on broken markup (HTMLParser is forgiving)."""
    collector = _TextCollector()
    collector.feed(html)
    collector.close()
    collector._break()
    return "\n".join(collector.lines).strip()
