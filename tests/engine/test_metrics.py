"""The metric helpers: reminder lateness buckets, embedding cache lookups through the cache's callback."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from engine import metrics
from tools.infra.embeddings import EmbeddingCache


def scraped(name: str, **labels: str) -> float | None:
    """The value a scrape of this process shows; `None`: no such series."""
    for family in text_string_to_metric_families(metrics.render(metrics.Snapshot()).decode()):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return None


def value(name: str, **labels: str) -> float:
    return scraped(name, **labels) or 0.0


def test_reminder_lateness_lands_in_its_bucket_and_early_counts_as_zero() -> None:
    count, total = value("faa_reminder_lateness_seconds_count"), value("faa_reminder_lateness_seconds_sum")
    within_30, within_60 = (value("faa_reminder_lateness_seconds_bucket", le=le) for le in ("30.0", "60.0"))
    fast = value("faa_reminder_lateness_seconds_bucket", le="0.5")

    metrics.observe_reminder_lateness(42.0)
    metrics.observe_reminder_lateness(-3.0)  # fired before it was due

    assert value("faa_reminder_lateness_seconds_count") - count == 2
    assert value("faa_reminder_lateness_seconds_sum") - total == 42.0
    assert value("faa_reminder_lateness_seconds_bucket", le="0.5") - fast == 1
    assert value("faa_reminder_lateness_seconds_bucket", le="30.0") - within_30 == 1
    assert value("faa_reminder_lateness_seconds_bucket", le="60.0") - within_60 == 2


def test_an_embedding_cache_reports_its_lookups() -> None:
    now = [0.0]
    cache = EmbeddingCache(max_entries=2, ttl_s=10, clock=lambda: now[0], on_lookup=metrics.embedding_lookup)
    hits, misses = (value("faa_embedding_cache_lookups_total", result=r) for r in ("hit", "miss"))

    assert cache.get("a") is None
    cache.put("a", [1.0])
    assert cache.get("a") == [1.0]
    now[0] = 11.0  # expired
    assert cache.get("a") is None

    assert value("faa_embedding_cache_lookups_total", result="hit") - hits == 1
    assert value("faa_embedding_cache_lookups_total", result="miss") - misses == 2
    total = value("faa_embedding_cache_lookups_total", result="hit") + value(
        "faa_embedding_cache_lookups_total", result="miss"
    )
    assert value("faa_embedding_cache_hit_ratio") == value("faa_embedding_cache_lookups_total", result="hit") / total


def test_every_step_has_a_series_before_its_first_observation() -> None:
    for step in metrics.STEPS:
        assert scraped("faa_step_duration_seconds_count", step=step) is not None
