"""Time of the grounding (engine/grounding) per message, over every message of the golden set (both splits), in
one process: the first pass warms the parsers (jionlp loads its tables on first use), the timed passes follow.

    .venv/bin/python bench/grounding.py [--rounds 5]

The last stdout line is the JSON of the figures: p50, p95 and max milliseconds per message, by language.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from engine.grounding import ground  # noqa: E402
from engine.grounding.language import language_of  # noqa: E402

GOLDEN = Path(__file__).resolve().parent / "golden"
ZONE = "Europe/Berlin"


def messages() -> list[str]:
    texts = []
    for name in ("cases.yaml", "test.yaml"):
        for case in yaml.safe_load((GOLDEN / name).read_text(encoding="utf-8"))["cases"]:
            texts += [str(turn["text"]) for turn in case.get("turns") or []] + [str(case["text"])]
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    texts = messages()
    now = datetime(2026, 11, 23, 10, 0, tzinfo=ZoneInfo(ZONE))
    for text in texts:  # warm-up
        ground(text, now, ZONE, ["Anna", "Ben"])
    timings: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for text in texts:
            started = time.perf_counter()
            ground(text, now, ZONE, ["Anna", "Ben"])
            timings.setdefault(language_of(text), []).append((time.perf_counter() - started) * 1000)
    every = [t for values in timings.values() for t in values]
    figures = {"messages": len(texts), "rounds": args.rounds, **_figures(every)}
    figures["by_language"] = {language: _figures(values) for language, values in sorted(timings.items())}
    print(json.dumps(figures))


def _figures(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
        "max_ms": round(ordered[-1], 2),
    }


if __name__ == "__main__":
    main()
