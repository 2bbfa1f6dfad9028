"""A household's memories for the benchmarks: realistic rows bulk-loaded with COPY on the owner connection.

Content, kind, category, merchant, person, amount and currency look like what families store; occurred_at is
spread over the past year; embeddings are random unit vectors of the schema's dimension (cheap, no HTTP).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import _harness as h
import asyncpg
import numpy as np
from pgvector.asyncpg import register_vector

_EXPENSES = {  # category: (merchants, typical amount range in currency units)
    "groceries": (("Lidl", "Rewe", "Aldi", "Edeka", "Penny"), (4, 120)),
    "fuel": (("Aral", "Shell", "Esso", "Total"), (30, 95)),
    "restaurants": (("Vapiano", "Pizzeria Roma", "Sushi Bar", "Burger King"), (12, 110)),
    "pharmacy": (("DM", "Rossmann", "Apotheke am Markt"), (3, 60)),
    "clothes": (("H&M", "Zara", "C&A", "Decathlon"), (15, 180)),
    "kids": (("Spielwaren Krause", "Thalia", "Kita"), (5, 150)),
    "transport": (("Deutsche Bahn", "BVG", "Uber"), (3, 140)),
    "utilities": (("Vattenfall", "Telekom", "Stadtwerke"), (25, 160)),
    "entertainment": (("Netflix", "Kino", "Spotify", "Zoo"), (8, 60)),
    "rent": (("Wohnbau GmbH",), (950, 1450)),
}
_NOTES = {  # kind: sentences; {p} is a family member
    "health": (
        "{p} had a check-up, the doctor said everything looks fine",
        "{p} is allergic to peanuts, the doctor said to carry an epipen",
        "{p} needs the flu vaccine in autumn",
        "The dentist said {p} should floss more",
        "{p} takes ibuprofen for the knee, the doctor said max three a day",
    ),
    "plan": (
        "{p} wants to visit grandma at Easter",
        "Summer holiday at the Baltic Sea, {p} books the flat",
        "{p} has a parent-teacher meeting next Tuesday",
    ),
    "fact": (
        "{p} likes green tea in the morning",
        "{p}'s shoe size is 38",
        "The wifi password is on the fridge, {p} changed it",
        "{p}'s best friend is called Mia",
    ),
    "note": ("The bike needs new brakes", "{p} lent the drill to the neighbours", "Water the plants on Fridays"),
    "shopping": (
        "Buy new football boots for {p}",
        "We need a new kettle",
        "{p} wants a birthday cake with strawberries",
    ),
    "contact": (
        "Dr. Weber, paediatrician, 030 1234567",
        "Plumber Krüger, 0171 555 0101",
        "{p}'s school office, 030 998877",
    ),
}


_CHUNK = 10_000
_INDEXED_SAMPLE = 2_000  # rows copied with the HNSW index in place, to measure that rate
_COPY_COLUMNS = [
    "household_id",
    "author_id",
    "content",
    "ai_understanding",
    "embedding",
    "amount",
    "currency",
    "occurred_at",
    "visibility",
    "created_at",
    "updated_at",
]
_CATEGORY_WEIGHTS = np.array([30, 8, 10, 6, 5, 6, 8, 5, 5, 1], dtype=float)  # in _EXPENSES order
_CATEGORY_WEIGHTS /= _CATEGORY_WEIGHTS.sum()


def _expense(category: str, pick: int, money: float) -> tuple[str, dict[str, Any], Decimal, str]:
    merchants, (low, high) = _EXPENSES[category]
    merchant = merchants[pick % len(merchants)]
    amount = Decimal(int((low + (high - low) * money**2) * 100)).scaleb(-2)
    currency = "EUR" if pick % 100 < 92 else ("USD" if pick % 100 < 97 else "GBP")
    understanding = {"kind": "expense", "category": category, "merchant": merchant}
    return f"Paid {amount} {currency} for {category} at {merchant}", understanding, amount, currency


def _income(person: str, pick: int, money: float) -> tuple[str, dict[str, Any], Decimal, str]:
    amount = Decimal(int((200 + 3800 * money) * 100)).scaleb(-2)
    source = ("salary", "refund", "allowance", "sold-items")[pick % 4]
    understanding = {"kind": "income", "category": source, "person": person}
    return f"Received {amount} EUR ({source.replace('-', ' ')})", understanding, amount, "EUR"


def _note(person: str, pick: int) -> tuple[str, dict[str, Any], None, None]:
    kind = list(_NOTES)[pick % len(_NOTES)]
    sentences = _NOTES[kind]
    understanding: dict[str, Any] = {"kind": kind, "person": person}
    if kind == "health":
        understanding["category"] = "doctor"
    return sentences[(pick // 7) % len(sentences)].format(p=person), understanding, None, None


def memory_chunks(
    count: int, household_id: int, author_ids: Sequence[int], people: Sequence[str], seed: int = 42
) -> Iterator[list[tuple[Any, ...]]]:
    """COPY records in chunks of 10,000: 75% expenses, 3% income, the rest notes (health, plans, facts…), by
    the household's members over the past year, 3% private, each with a random unit vector as its embedding."""
    rng = np.random.default_rng(seed)
    now = datetime.now(UTC)
    categories = list(_EXPENSES)
    for start in range(0, count, _CHUNK):
        n = min(_CHUNK, count - start)
        vectors = rng.standard_normal((n, h.EMBEDDING_DIM), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        roll, money, private = rng.random(n), rng.random(n), rng.random(n) < 0.03
        seconds_ago = rng.uniform(0, 365 * 86400, n)
        authors = rng.integers(0, len(author_ids), n)
        persons = rng.integers(0, len(people), n)
        cats = rng.choice(len(categories), n, p=_CATEGORY_WEIGHTS)
        picks = rng.integers(0, 1_000_000, n)
        records = []
        for i in range(n):
            occurred = now - timedelta(seconds=float(seconds_ago[i]))
            person, pick = people[persons[i]], int(picks[i])
            if roll[i] < 0.75:
                content, understanding, amount, currency = _expense(categories[cats[i]], pick, float(money[i]))
            elif roll[i] < 0.78:
                content, understanding, amount, currency = _income(person, pick, float(money[i]))
            else:
                content, understanding, amount, currency = _note(person, pick)
            visibility = "private" if private[i] else "household"
            records.append(
                (
                    household_id,
                    author_ids[authors[i]],
                    content,
                    json.dumps(understanding),
                    vectors[i],
                    amount,
                    currency,
                    occurred,
                    visibility,
                    occurred,
                    occurred,
                )
            )
        yield records


async def _copy(conn: asyncpg.Connection, records: list[tuple[Any, ...]]) -> float:
    started = time.monotonic()
    await conn.copy_records_to_table("memories", records=records, columns=_COPY_COLUMNS)
    return time.monotonic() - started


async def _build_hnsw(conn: asyncpg.Connection, indexdef: str) -> float:
    """Re-create the index exactly as the migration defines it, with room to build the graph in memory."""
    started = time.monotonic()
    await conn.execute("SET maintenance_work_mem = '1GB'")
    await conn.execute("SET max_parallel_maintenance_workers = 1")  # the leader + 1 worker on a 2-core machine
    h.progress("building the HNSW index memories_embedding (maintenance_work_mem=1GB, 1 parallel worker)...")
    await conn.execute(indexdef)
    return time.monotonic() - started


async def load_memories(
    admin_dsn: str, household_id: int, author_ids: Sequence[int], people: Sequence[str], count: int
) -> dict[str, Any]:
    """COPY `count` memories on the owner connection (a superuser: RLS does not apply to it).

    The first 2,000 rows go into the table as migrated, HNSW index in place, to measure that rate; then the
    index is dropped, the rest is copied, and the index is re-created — loading into the indexed table would
    take minutes. Returns the figures (seconds, rows per second, the final row count)."""
    figures: dict[str, Any] = {"indexed_copy_rows_per_s": None, "index_build_s": None, "copy_s": 0.0}
    conn = await asyncpg.connect(admin_dsn)
    try:
        await register_vector(conn)
        indexdef = await conn.fetchval("SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_embedding'")
        started, loaded = time.monotonic(), 0
        for records in memory_chunks(count, household_id, author_ids, people):
            if loaded == 0:
                sample, records = records[:_INDEXED_SAMPLE], records[_INDEXED_SAMPLE:]
                seconds = await _copy(conn, sample)
                rate = figures["indexed_copy_rows_per_s"] = round(len(sample) / seconds)
                h.progress(
                    f"COPY into the HNSW-indexed table: {len(sample)} rows in {seconds:.2f}s ({rate} rows/s, so >= "
                    f"{count / rate:.0f}s for {count}: inserts slow down as the graph grows); dropping the index"
                )
                await conn.execute("DROP INDEX memories_embedding")
                loaded += len(sample)
            if records:
                figures["copy_s"] += await _copy(conn, records)
                loaded += len(records)
            h.progress(f"loaded {loaded}/{count} memories")
        figures["load_s"] = round(time.monotonic() - started, 2)
        figures["copy_s"] = round(figures["copy_s"], 2)
        if loaded:
            figures["index_build_s"] = round(await _build_hnsw(conn, indexdef), 2)
            h.progress(f"HNSW index built in {figures['index_build_s']}s")
        await conn.execute("VACUUM ANALYZE memories")
        figures["memories"] = await conn.fetchval("SELECT count(*) FROM memories WHERE household_id = $1", household_id)
    finally:
        await conn.close()
    return figures
