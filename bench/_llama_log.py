"""Tokens the local llama.cpp server evaluated and generated, read from its log: the OpenAI-compatible answer
reports the whole prompt, while the server's own lines say how much of it the prompt cache spared."""

from __future__ import annotations

import re
from pathlib import Path

_PROMPT = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")
# llama-cpp-python's `llama_perf_context_print:        eval time = … /  N runs`, llama.cpp server's
# `slot print_timing: id  3 | task 0 |        eval time = … /  N tokens`.
_GENERATED = re.compile(r"(?:^\S+:|\|)\s+eval time =\s*[\d.]+ ms /\s*(\d+) (?:runs|tokens)", re.MULTILINE)


class LlamaLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def position(self) -> int:
        """Where the log ends now."""
        return self.path.stat().st_size if self.path.exists() else 0

    def since(self, position: int) -> tuple[int, int]:
        """(prompt tokens evaluated, tokens generated) in the lines written after `position`."""
        if not self.path.exists():
            return 0, 0
        with self.path.open("rb") as log:
            log.seek(position)
            text = log.read().decode(errors="replace")
        evaluated = sum(int(n) for n in _PROMPT.findall(text))
        generated = sum(int(n) for n in _GENERATED.findall(text))
        return evaluated, generated
