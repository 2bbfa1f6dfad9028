"""Prometheus metrics: what the engine, the adapters and the worker count, and the scrape-time snapshot.

The metrics are process-wide, like the logger: prometheus_client keeps them in its default registry, which a
process exposes with `render`. Code in `engine/`, `bot/` and `worker/` records through the functions below;
`tools/` never does (it must not import the engine), so tool calls are counted where the engine runs them and
the embedding caches report their lookups through a callback.

Label values are bounded: channels, outcomes, steps and LLM purposes come from the code, the model from the
settings, and a tool name the model made up is counted as `unknown`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

# Set (by `bot.ops.supervisor.serve_processes`) before prometheus_client is imported, it keeps each process's
# counters in files of that directory: prometheus_client's multiprocess mode.
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"

# The `_created` series double the output and no dashboard here reads them.
disable_created_metrics()

STEPS = ("preprocess", "experiment", "analyse", "clarify", "execute", "record")

_STEP_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_MESSAGE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)
_LATENESS_BUCKETS = (0.5, 1.0, 2.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 900.0, 3600.0)

MESSAGES_RECEIVED = Counter(
    "faa_messages_received",
    "Messages accepted into the inbox, by channel; duplicate deliveries apart.",
    ["channel", "duplicate"],
)
MESSAGES = Counter(
    "faa_messages", "Messages finished (reply written to the outbox), by channel and outcome.", ["channel", "outcome"]
)
MESSAGE_SECONDS = Histogram(
    "faa_message_duration_seconds",
    "Engine time per finished message, first step to recorded reply.",
    ["channel", "outcome"],
    buckets=_MESSAGE_BUCKETS,
)
STEP_SECONDS = Histogram(
    "faa_step_duration_seconds", "Duration of each of the engine's six steps.", ["step"], buckets=_STEP_BUCKETS
)
for _step in STEPS:  # every step has a series from the start, so rates work before its first observation
    STEP_SECONDS.labels(_step)
LLM_CALLS = Counter(
    "faa_llm_calls",
    "LLM calls made (journal replays excluded), by model, purpose and result.",
    ["model", "kind", "result"],
)
LLM_TOKENS = Counter(
    "faa_llm_tokens",
    "Tokens the LLM endpoint reported, by model, purpose and direction (prompt, completion).",
    ["model", "kind", "direction"],
)
LLM_SECONDS = Histogram(
    "faa_llm_call_duration_seconds", "Duration of successful LLM calls.", ["model", "kind"], buckets=_STEP_BUCKETS
)
TOOL_CALLS = Counter(
    "faa_tool_calls",
    "Tool calls (journal replays excluded) by tool and result: ok, invalid (sent back to the "
    "model to fix) or error (the tool failed).",
    ["tool", "result"],
)
ROUTES = Counter(
    "faa_routes",
    "Messages by the route they took and what chose it: cues (keywords and grounding), model, or resumed (the "
    "answer to a question FAA asked).",
    ["route", "chosen_by"],
)
REMINDER_LATENESS = Histogram(
    "faa_reminder_lateness_seconds",
    "How long after its due time a reminder fired (early counts as 0).",
    buckets=_LATENESS_BUCKETS,
)


def message_received(channel: str, *, duplicate: bool) -> None:
    _received(channel, duplicate).inc()


@functools.cache  # per accepted message in the web process: the label lookup cost twice the count itself
def _received(channel: str, duplicate: bool) -> Counter:
    return MESSAGES_RECEIVED.labels(channel, "true" if duplicate else "false")


def message_finished(channel: str, outcome: str, seconds: float) -> None:
    MESSAGES.labels(channel, outcome).inc()
    MESSAGE_SECONDS.labels(channel, outcome).observe(seconds)


def step_finished(step: str, seconds: float) -> int:
    """Observe one engine step; returns its duration in milliseconds, for the step's log line."""
    STEP_SECONDS.labels(step).observe(seconds)
    return round(seconds * 1000)


def llm_call(model: str, kind: str, *, seconds: float, prompt_tokens: int, completion_tokens: int) -> None:
    LLM_CALLS.labels(model, kind, "ok").inc()
    LLM_SECONDS.labels(model, kind).observe(seconds)
    LLM_TOKENS.labels(model, kind, "prompt").inc(prompt_tokens)
    LLM_TOKENS.labels(model, kind, "completion").inc(completion_tokens)


def llm_call_failed(model: str, kind: str) -> None:
    LLM_CALLS.labels(model, kind, "error").inc()


def tool_call(tool: str, result: str, known_tools: list[str]) -> None:
    """Count one tool call; `result` is ok, invalid or error."""
    TOOL_CALLS.labels(tool if tool in known_tools else "unknown", result).inc()


def route_taken(route: str, chosen_by: str) -> None:
    ROUTES.labels(route, chosen_by).inc()


def observe_reminder_lateness(seconds: float) -> None:
    """Record how late a reminder fired: call it where the reminder goes out, with now − due time."""
    REMINDER_LATENESS.observe(max(0.0, seconds))


@dataclass(frozen=True, eq=False)  # registered as a collector, so hashed by identity
class Snapshot:
    """Values read at scrape time: arq jobs in Redis, unfinished inbox and outbox rows."""

    queue_jobs: Mapping[str, int] = field(default_factory=dict)  # ready / deferred
    inbox: Mapping[str, int] = field(default_factory=dict)  # queued / processing
    outbox_pending: int | None = None
    errors: tuple[str, ...] = ()  # sources that could not be read this time

    def collect(self) -> Iterator[Metric]:
        queue = GaugeMetricFamily(
            "faa_queue_jobs", "arq jobs waiting in Redis: ready to run or deferred.", labels=["state"]
        )
        for state, count in self.queue_jobs.items():
            queue.add_metric([state], count)
        inbox = GaugeMetricFamily(
            "faa_inbox_messages", "Inbox messages not finished yet, by status.", labels=["status"]
        )
        for status, count in self.inbox.items():
            inbox.add_metric([status], count)
        yield from (queue, inbox)
        if self.outbox_pending is not None:
            yield GaugeMetricFamily(
                "faa_outbox_pending_messages", "Replies not delivered yet.", value=self.outbox_pending
            )
        errors = GaugeMetricFamily(
            "faa_scrape_errors", "1 for each source that could not be read during this scrape.", labels=["source"]
        )
        for source in self.errors:
            errors.add_metric([source], 1)
        yield errors


class _EmbeddingLookups:
    """Embedding cache lookups of every cache in the process (the web API and an in-process worker each have
    one); the caches report each lookup here, and a scrape reads the totals."""

    def __init__(self) -> None:
        self.hits = 0
        self.misses = 0

    def __call__(self, hit: bool) -> None:
        if hit:
            self.hits += 1
        else:
            self.misses += 1

    def collect(self) -> Iterator[Metric]:
        lookups = CounterMetricFamily(
            "faa_embedding_cache_lookups", "Embedding cache lookups by result (hit, miss).", labels=["result"]
        )
        lookups.add_metric(["hit"], self.hits)
        lookups.add_metric(["miss"], self.misses)
        yield lookups
        total = self.hits + self.misses
        yield GaugeMetricFamily(
            "faa_embedding_cache_hit_ratio",
            "Share of embedding lookups served from the cache since the process started.",
            value=self.hits / total if total else 0.0,
        )


# Handed to each EmbeddingCache as its `on_lookup` (tools/ cannot import this module). Kept apart from the
# default registry, whose counters may be summed over several processes: these lookups are this process's.
embedding_lookup = _EmbeddingLookups()
_OWN = CollectorRegistry(auto_describe=False)
_OWN.register(embedding_lookup)


def _counted() -> CollectorRegistry:
    """The counters and histograms: this process's, or, where several web processes share a port (and this
    variable names their directory), all of theirs summed."""
    directory = os.environ.get(MULTIPROCESS_DIR)
    if not directory:
        return REGISTRY
    merged = CollectorRegistry(auto_describe=False)
    MultiProcessCollector(merged, directory)
    return merged


def render(snapshot: Snapshot) -> bytes:
    """The process's metrics and the snapshot, in the Prometheus text format."""
    scraped = CollectorRegistry(auto_describe=False)
    scraped.register(snapshot)
    # Three registries, one exposition: the text format is a sequence of families, and no name is in two.
    return generate_latest(_counted()) + generate_latest(_OWN) + generate_latest(scraped)
