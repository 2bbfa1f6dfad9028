"""Per-message overhead of the whole pipeline with a zero-latency scripted LLM and 100,000 memories.

Path measured, one message at a time: web API `POST /v1/messages` (waiting for the reply) → inbox → arq job →
engine (six steps) → tools → PostgreSQL → outbox → delivery job → reply published → HTTP response.

    .venv/bin/python bench/engine_overhead.py [--memories 100000] [--n 100]

Overhead = client-side end-to-end latency minus the time the request spent inside the scripted model server
(chat and embedding handling, measured server-side). The last stdout line is the JSON of the figures; targets
(reported, never asserted): overhead p95 <= 30 ms, 1 LLM call per simple record, <= 2 per query.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)
import aiohttp  # noqa: E402
import asyncpg  # noqa: E402
import numpy as np  # noqa: E402
from _memories import load_memories  # noqa: E402

from engine.settings import Settings  # noqa: E402
from tests.e2e.scripts import routed_model  # noqa: E402

REDIS_DB = 14
MEMBERS = ("Anna", "Ben", "Tom", "Lea")
REQUEST_TIMEOUT_S = 30.0  # the web API waits up to 25 s (WEB_REPLY_WAIT_S) for a reply
MAIN_BUDGET_S = 150.0  # for the messages of the main pass; whatever is done by then is reported

# ---------------------------------------------------------------------------------------------------- scripted model


bench_model = routed_model()  # what a competent model answers each call (the stories of tests/e2e/test_stories.py)


def messages(n: int, seed: int = 7) -> list[tuple[str, str]]:
    """n simple records and n queries (half aggregate, half semantic), interleaved: (kind, text)."""
    rng = np.random.default_rng(seed)
    shops = {"groceries": ("Lidl", "Rewe", "Aldi", "Edeka"), "fuel": ("Aral", "Shell"), "pharmacy": ("DM", "Rossmann")}
    out: list[tuple[str, str]] = []
    for i in range(n):
        category = ("groceries", "groceries", "fuel", "pharmacy")[i % 4]
        merchant = shops[category][int(rng.integers(0, len(shops[category])))]
        amount = f"{rng.integers(150, 9000) / 100:.2f}"
        out.append(("record", f"I spent {amount} euros on {category} at {merchant}"))
        if i % 2 == 0:
            out.append(("aggregate", "How much did we spend on groceries this month?"))
        else:
            out.append(("search", "What did the doctor say about Tom?"))
    return out


# ---------------------------------------------------------------------------------------------------- run


async def send_all(
    base_url: str, family: h.Family, llm: h.TimedFakeOpenAI, batch: list[tuple[str, str]], tag: str, budget_s: float
) -> list[dict[str, Any]]:
    """Send each message and wait for its reply before the next; one sample per message. Stops sending after
    `budget_s` seconds (the samples so far are reported)."""
    samples = []
    deadline = time.monotonic() + budget_s
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)) as session:
        for number, (kind, text) in enumerate(batch):
            if time.monotonic() > deadline:
                h.progress(f"{tag}: time budget of {budget_s:.0f}s used after {number} messages; reporting those")
                break
            llm.reset()
            started = time.perf_counter()
            error, body = await _post(session, base_url, family.auth(MEMBERS[number % len(MEMBERS)]), text, tag, number)
            e2e_ms = (time.perf_counter() - started) * 1000
            samples.append(
                {
                    "kind": kind,
                    "message_id": body.get("message_id"),
                    "e2e_ms": e2e_ms,
                    "fake_ms": sum(x.seconds for x in llm.handled) * 1000,
                    "llm_calls": len(llm.requests),
                    "embedding_calls": len(llm.embedding_requests),
                    "error": error,
                    "reply": body.get("reply"),
                }
            )
            if error:
                h.progress(f"{tag}: message {number} ({kind}) failed: {error}")
            if (number + 1) % 50 == 0:
                h.progress(f"{tag}: {number + 1}/{len(batch)} messages")
    return samples


async def _post(
    session: aiohttp.ClientSession, base_url: str, auth: dict[str, str], text: str, tag: str, number: int
) -> tuple[str | None, dict[str, Any]]:
    payload = {"text": text, "client_message_id": f"{tag}-{number}"}
    try:
        async with session.post(f"{base_url}/v1/messages", json=payload, headers=auth) as response:
            body = await response.json()
            if response.status != 200 or body.get("outcome") != "answered":
                return f"HTTP {response.status}: {json.dumps(body)[:200]}", body
            return None, body
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}", {}


async def breakdown(admin_dsn: str, samples: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Where each message's time went, from the database's own timestamps (one clock):
    pickup = received → engine start (enqueue + arq poll + job start), engine = the engine's own latency_ms
    (includes the model server's time), delivery = reply committed → delivery job locked it (enqueue + arq poll)."""
    ids = [s["message_id"] for s in samples if s["message_id"] is not None]
    conn = await asyncpg.connect(admin_dsn)
    try:
        rows = await conn.fetch(
            """SELECT i.id,
                      extract(epoch FROM (t.created_at - i.received_at)) * 1000 - t.latency_ms AS pickup_ms,
                      t.latency_ms AS engine_ms,
                      extract(epoch FROM (o.sent_at - o.created_at)) * 1000 AS delivery_ms
               FROM inbox i JOIN interactions t ON t.inbox_id = i.id JOIN outbox o ON o.inbox_id = i.id
               WHERE i.id = ANY($1::bigint[])""",
            ids,
        )
    finally:
        await conn.close()
    by_id = {r["id"]: r for r in rows}
    out: dict[str, list[float]] = {"pickup_wait": [], "engine": [], "engine_minus_fake": [], "delivery_wait": []}
    for s in samples:
        row = by_id.get(s["message_id"])
        if row is None or row["delivery_ms"] is None:
            continue
        out["pickup_wait"].append(float(row["pickup_ms"]))
        out["engine"].append(float(row["engine_ms"]))
        out["engine_minus_fake"].append(float(row["engine_ms"]) - s["fake_ms"])
        out["delivery_wait"].append(float(row["delivery_ms"]))
    return out


async def measure(
    cluster: h.Cluster,
    settings: Settings,
    family: h.Family,
    llm: h.TimedFakeOpenAI,
    *,
    n: int,
    tag: str,
    budget_s: float,
) -> tuple[list[dict[str, Any]], dict[str, list[float]], float, float]:
    """A fresh web API and worker; a short warm-up, then n records and n queries one at a time.
    Returns the samples, their breakdown, the worker's poll delay in ms and this process's CPU time per message
    in ms (web API, worker, scripted model and client together: the figure's own cost, free of waiting)."""
    async with h.web_server(settings) as server, h.worker_in_loop(settings):
        poll_ms = settings.worker.poll_delay_s * 1000
        h.progress(f"{tag}: web API on {server.base_url}, worker polling every {poll_ms:g} ms")
        await send_all(server.base_url, family, llm, messages(3, seed=1), f"{tag}-warmup", budget_s)
        h.progress(f"{tag}: warm-up done; sending {2 * n} messages one at a time")
        cpu_started = time.process_time()
        samples = await send_all(server.base_url, family, llm, messages(n), tag, budget_s)
        cpu_ms = (time.process_time() - cpu_started) * 1000 / max(1, len(samples))
    return samples, await breakdown(cluster.admin_dsn, samples), poll_ms, cpu_ms


def figures(samples: list[dict[str, Any]], parts: dict[str, list[float]], prefix: str = "") -> dict[str, Any]:
    """The headline figures of one pass; overhead = end-to-end minus the model server's own time."""
    ok = [s for s in samples if s["error"] is None]
    records = [s for s in ok if s["kind"] == "record"]
    queries = [s for s in ok if s["kind"] != "record"]
    over, e2e = h.summary([s["e2e_ms"] - s["fake_ms"] for s in ok]), h.summary([s["e2e_ms"] for s in ok])
    out: dict[str, Any] = {
        "overhead_p50_ms": over.get("p50"),
        "overhead_p95_ms": over.get("p95"),
        "llm_calls_simple_record": max((s["llm_calls"] for s in records), default=None),
        "llm_calls_query": max((s["llm_calls"] for s in queries), default=None),
        "e2e_p50_ms": e2e.get("p50"),
        "e2e_p95_ms": e2e.get("p95"),
        "e2e_p99_ms": e2e.get("p99"),
        "overhead_p99_ms": over.get("p99"),
        "fake_llm_p50_ms": h.summary([s["fake_ms"] for s in ok]).get("p50"),
        "llm_calls_simple_record_min": min((s["llm_calls"] for s in records), default=None),
        "llm_calls_query_mean": round(sum(s["llm_calls"] for s in queries) / len(queries), 2) if queries else None,
        "embedding_calls_mean": round(sum(s["embedding_calls"] for s in ok) / len(ok), 2) if ok else None,
        "messages": len(samples),
        "errors": len(samples) - len(ok),
    }
    for kind in ("record", "aggregate", "search"):
        stats = h.summary([s["e2e_ms"] - s["fake_ms"] for s in ok if s["kind"] == kind])
        out[f"overhead_{kind}_p50_ms"], out[f"overhead_{kind}_p95_ms"] = stats.get("p50"), stats.get("p95")
    for name, values in parts.items():
        stats = h.summary(values)
        out[f"{name}_p50_ms"], out[f"{name}_p95_ms"] = stats.get("p50"), stats.get("p95")
    return {f"{prefix}{key}": value for key, value in out.items()}


async def prepare(cluster: h.Cluster, memories: int) -> tuple[h.Family, dict[str, Any]]:
    """Migrate, create the household and its members, bulk-load the memories."""
    await h.migrate_cluster(cluster)
    admin = await asyncpg.connect(cluster.admin_dsn)
    try:
        family = await h.make_family(admin, "Bench", MEMBERS)
    finally:
        await admin.close()
    loaded = await load_memories(
        cluster.admin_dsn, family.household_id, list(family.user_ids.values()), MEMBERS, memories
    )
    h.progress(f"{loaded['memories']} memories in household {family.household_id}")
    return family, loaded


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with h.postgres_cluster() as cluster:
        family, loaded = await prepare(cluster, args.memories)
        async with h.fake_llm() as llm, h.redis_db(REDIS_DB) as redis:
            llm.script(bench_model)
            settings = h.make_settings(cluster, llm.base_url, redis)
            samples, parts, poll_ms, cpu_ms = await measure(
                cluster, settings, family, llm, n=args.n, tag="bench", budget_s=MAIN_BUDGET_S
            )
            result = figures(samples, parts)
            result.update(
                {
                    "memories": loaded["memories"],
                    "load_s": loaded["load_s"],
                    "copy_s": loaded["copy_s"],
                    "indexed_copy_rows_per_s": loaded["indexed_copy_rows_per_s"],
                    "index_build_s": loaded["index_build_s"],
                    "poll_ms": poll_ms,
                    "process_cpu_ms_per_message": round(cpu_ms, 2),
                }
            )
            h.progress("replies, e.g.: " + " | ".join(str(s["reply"]) for s in samples[:3]))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000, help="memories bulk-loaded into the household")
    parser.add_argument("--n", type=int, default=100, help="simple records, and queries, each (sequential)")
    args = parser.parse_args()
    if not (1 <= args.n <= 1000 and 0 <= args.memories <= 1_000_000):
        parser.error("--n must be 1..1000, --memories 0..1,000,000")
    return h.run_benchmark(
        run(args),
        lambda r: (
            f"overhead p50 {r['overhead_p50_ms']} ms, p95 {r['overhead_p95_ms']} ms (target p95 <= 30); "
            f"LLM calls: record {r['llm_calls_simple_record']} (target 1), "
            f"query {r['llm_calls_query']} (target <= 2)"
        ),
    )


if __name__ == "__main__":
    raise SystemExit(main())
