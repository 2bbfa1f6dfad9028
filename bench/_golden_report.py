"""The golden set's figures: pass rates and costs per category, route and language, and the table on stderr.

Pass rates count cases; costs (LLM calls, prompt and completion tokens, tokens the server evaluated, latency)
count messages, so a case with earlier turns adds each of its messages. A case's route is the one the engine
recorded for its last message (`interactions.trace ->> 'route'`, "-" when it records none).
"""

from __future__ import annotations

from typing import Any

from _golden import LANGUAGES, CaseResult, Effects
from _harness import percentile

_COLUMNS = (
    ("cases", 6),
    ("pass", 6),
    ("calls", 6),
    ("tok in", 7),
    ("tok out", 8),
    ("tok eval", 9),
    ("p50 s", 7),
    ("p95 s", 7),
    ("invented", 9),
    ("skipped", 8),
)


def _mean(values: list[float], digits: int = 2) -> float | None:
    return round(sum(values) / len(values), digits) if values else None


def stats(results: list[CaseResult]) -> dict[str, Any]:
    scored = [r for r in results if not r.skipped and r.effects is not None]
    messages: list[Effects] = [m for r in scored for m in r.messages]
    latencies = [m.latency_s for m in messages]
    evaluated = [float(m.tokens_evaluated) for m in messages if m.tokens_evaluated is not None]
    return {
        "cases": len(scored),
        "passed": sum(r.passed for r in scored),
        "pass_rate": round(sum(r.passed for r in scored) / len(scored), 3) if scored else None,
        "messages": len(messages),
        "llm_calls_mean": _mean([float(m.llm_calls) for m in messages]),
        "tokens_in_mean": _mean([float(m.tokens_in) for m in messages], 1),
        "tokens_out_mean": _mean([float(m.tokens_out) for m in messages], 1),
        "tokens_evaluated_mean": _mean(evaluated, 1),
        "latency_p50_s": round(percentile(latencies, 50), 1) if latencies else None,
        "latency_p95_s": round(percentile(latencies, 95), 1) if latencies else None,
        "invented_number_replies": sum(bool(found) for r in scored for found in r.invented),
        "skipped": sum(r.skipped for r in results),
    }


def _grouped(results: list[CaseResult], key: Any, order: list[str] | None = None) -> dict[str, dict[str, Any]]:
    names = order if order is not None else list(dict.fromkeys(key(r) for r in results))
    return {name: stats([r for r in results if key(r) == name]) for name in names}


def figures(results: list[CaseResult]) -> dict[str, Any]:
    """The JSON figures: the overall ones at the top, then by category, route and language, the simple-record
    cases on their own, and which cases failed and why."""
    out = stats(results)
    out["by_category"] = _grouped(results, lambda r: r.case.category)
    out["by_route"] = _grouped(results, lambda r: r.route)
    out["by_language"] = _grouped(results, lambda r: r.case.lang, list(LANGUAGES))
    out["simple_record"] = stats([r for r in results if r.case.simple_record])
    out["failed"] = [r.case.id for r in results if not r.passed and not r.skipped]
    out["reasons"] = {r.case.id: r.reasons for r in results if not r.passed and not r.skipped}
    return out


def _row(name: str, row: dict[str, Any]) -> str:
    rate = "-" if row["pass_rate"] is None else f"{row['pass_rate']:.0%}"
    values = (
        row["cases"],
        rate,
        row["llm_calls_mean"],
        row["tokens_in_mean"],
        row["tokens_out_mean"],
        row["tokens_evaluated_mean"],
        row["latency_p50_s"],
        row["latency_p95_s"],
        row["invented_number_replies"],
        row["skipped"],
    )
    widths = [width for _, width in _COLUMNS]
    cells = "".join(f"{'-' if value is None else value:>{width}}" for value, width in zip(values, widths, strict=True))
    return f"{name:<14}{cells}"


def table(result: dict[str, Any]) -> str:
    header = f"{'':<14}" + "".join(f"{title:>{width}}" for title, width in _COLUMNS)
    lines = []
    for title, section in (("category", "by_category"), ("route", "by_route"), ("language", "by_language")):
        lines += ["", f"{title:<14}" + header[14:]]
        lines += [_row(name, row) for name, row in result[section].items()]
    lines += ["", _row("simple record", result["simple_record"]), _row("all", result)]
    return "\n".join(lines[1:])
