"""Fault tolerance: a flood of messages through `faa serve` and three `faa worker` processes while their peers fail,
and what became of every message.

    .venv/bin/python bench/chaos.py [--messages 1000] [--quick] [--only redis_restart,postgres_freeze]
    .venv/bin/python bench/chaos.py --only fairness,oversized [--flood 5000] [--model-s 0.5]

Everything runs on this machine and is its own: a redis-server on a free port, an embedded PostgreSQL cluster in a
temp dir, the scripted OpenAI-compatible server from tests/fakes (an expense message gets a `store` plan and a
reply), the web API and three workers as subprocesses configured through the environment (bench/_chaos_faults.py).
A client posts each message (`POST /v1/messages`, `wait: false`, its own client_message_id) at `--rate` a second
and, like a webhook's sender, posts it again until it is acknowledged (2xx). Replies are counted where the web
channel delivers them: Redis pub/sub, subscribed by this process.

Scenarios (each on a household of its own, one after another, each drained before the next):
- duplicate_posts: every message posted three times at once;
- worker_kills: ten SIGKILLs of a random worker during the flood, each worker started again at once;
- web_kill: the web process SIGKILLed at 30 % of the flood and started again;
- redis_restart: Redis SIGKILLed at 30 % and started again empty 5 s later;
- postgres_freeze: every PostgreSQL process SIGSTOPped at 30 % for `--freeze-s` (30) seconds;
- postgres_immediate: `pg_ctl restart -m immediate` at 30 %;
- fairness: one household floods `--flood` (5,000) messages, posted as fast as the web API acknowledges them by five
  of its members, while every model call takes `--model-s`; 5 s in, another household sends one message, and its
  reminder (set before the flood) falls due 30 s in;
- oversized: a 3 MB and a 20 MB photo by the signed email webhook and by SMTP, then a 49-megapixel page and a normal
  receipt photo by the webhook.

Per scenario, one JSON line: sent, posts (with the duplicates), acknowledged, answered_exactly_once, lost
(acknowledged, never answered), failed (answered with an apology), replies_without_effect (answered "done" without
its stored expense),
duplicate_effects, duplicate_sends, kills, recovery_s (from the fault's end until every message acknowledged before
it was answered), drain_s (from the last acknowledgement until the last reply), the API's non-2xx answers, and any
FAA process that exited by itself. Targets: 0 lost, 0 without effect, 0 duplicate effects, duplicate sends <= kills.

fairness reports the other household's answer latency (from its post to its reply) idle, before the flood, and
during it, the backlog when it posted (the flood's unanswered messages, most waiting in the inbox for their
household's turn, and the jobs in arq's queue), the reminder's lateness (its due time to its notification, and to its
firing as the database recorded it) and lost messages (acknowledged, never answered) of both households. Targets:
its answer within 3 s plus one model call of its idle latency, the reminder <= 2 s late, 0 lost.

oversized reports per email what the intake answered, whether its inbox row and its photo were stored, what the
engine read from the photo, and whether it was answered (a reply sent through the relay); lost (acknowledged, never
answered), refused (for good: the sender is told, as by a bounce) and retried_by_sender (a 5xx from the webhook, a 4xx
from SMTP: the sender tries again and, the same bytes failing alike, drops the message in the end); and whether the
receipt's text was read ("ocr": read, not read, or unavailable where RapidOCR is not installed). Targets: 0 lost,
0 retried by the sender, the receipt read.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import dataclasses
import importlib.util
import json
import math
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _chaos_faults as faults  # noqa: E402
import _chaos_mail as mail  # noqa: E402
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)
import aiohttp  # noqa: E402
import asyncpg  # noqa: E402
import redis.asyncio as redis_asyncio  # noqa: E402
from redis.exceptions import RedisError  # noqa: E402

from tests.e2e.scripts import routed_model, routed_words  # noqa: E402
from tests.fakes.openai_server import ChatRequest, Scripted  # noqa: E402
from tools.infra import local_postgres  # noqa: E402
from tools.storage import identities  # noqa: E402
from tools.storage.database import dsn_with_user  # noqa: E402

WORKERS = 3
SCENARIOS = (
    "duplicate_posts",
    "worker_kills",
    "web_kill",
    "redis_restart",
    "postgres_freeze",
    "postgres_immediate",
    "fairness",
    "oversized",
)
# One message of a member is answered at a time (WORKER_MEMBER_IN_FLIGHT): five members fill their household's slots.
FLOODERS = ("Anna", "Ben", "Clara", "Dora", "Emil")
POSTERS = 32  # flood posts under way at once: each waits for its acknowledgement, so the API sets the pace
OTHER_AFTER_S = 5.0  # into the flood, when the other household posts
REMINDER_AFTER_S = 30.0  # into the flood, when its reminder falls due
REMINDER = re.compile(r"^Remind me at (\S+) to (.+)$")


model = routed_model()  # an expense is stored from its one call, its reply written from the tool's result


class Model:
    """`model`, and a reminder at an exact time scheduled, any other message acknowledged; every call takes
    `delay_s`. Keeps each message as the engine handed it over, with what its photos said (`read`)."""

    def __init__(self) -> None:
        self.delay_s = 0.0
        self.read: list[str] = []

    def __call__(self, request: ChatRequest) -> Scripted:
        return dataclasses.replace(self._answer(request), delay_s=self.delay_s)

    def _answer(self, request: ChatRequest) -> Scripted:
        text = routed_words(request)
        if request.schema_name != "route":
            self.read.append(text)
        if match := REMINDER.match(text):
            return routed_model(reminder={"text": match.group(2)})(request)
        return model(request)


class Replies:
    """Every reply the web channel publishes (Redis pub/sub), per inbox id, with when it was first seen. Resubscribes
    after Redis comes back; nothing is published while it is down."""

    def __init__(self, redis_url: str) -> None:
        self.redis_url = redis_url
        self.count: collections.Counter[int] = collections.Counter()
        self.first: dict[int, float] = {}
        self.notified: dict[int, float] = {}  # reminder id → when (wall clock) its first notification came

    async def listen(self) -> None:
        while True:
            client = redis_asyncio.from_url(self.redis_url)
            try:
                pubsub = client.pubsub()
                await pubsub.psubscribe("faa:0:reply:*", "faa:0:notify:*")
                async for message in pubsub.listen():
                    if message["type"] != "pmessage":
                        continue
                    _, _, kind, key = message["channel"].split(b":", 3)
                    if kind == b"notify":
                        reminder_id = json.loads(message["data"]).get("reminder_id")
                        if reminder_id is not None:
                            self.notified.setdefault(int(reminder_id), time.time())
                        continue
                    self.count[int(key)] += 1
                    self.first.setdefault(int(key), time.monotonic())
            except (RedisError, OSError):
                await asyncio.sleep(0.1)
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await client.aclose()


@dataclass
class Run:
    """What the scenario's client saw."""

    acked: dict[int, float] = field(default_factory=dict)  # message number → when first acknowledged
    statuses: collections.Counter[str] = field(default_factory=collections.Counter)
    posts: int = 0
    kills: int = 0
    fault_end: float = 0.0


@dataclass
class Bench:
    args: argparse.Namespace
    cluster: h.Cluster
    server: Any  # the embedded PostgreSQL handle
    redis: faults.RedisServer
    faa: faults.Faa
    replies: Replies
    session: aiohttp.ClientSession
    model: Model
    relay: mail.Relay

    async def post(self, run: Run, token: str, number: int, copy: int) -> None:
        """Post one message until it is acknowledged, as a webhook's sender retries (gives up after 5 minutes)."""
        body = {"text": text(number), "client_message_id": f"m{number}", "wait": False}
        headers = {"Authorization": f"Bearer {token}"}
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                async with self.session.post(
                    f"{self.faa.base_url}/v1/messages", json=body, headers=headers
                ) as response:
                    run.statuses[str(response.status)] += copy == 0 or response.status >= 300
                    if response.status < 300:
                        run.acked.setdefault(number, time.monotonic())
                        return
                    if response.status < 500 and response.status != 429:
                        return  # refused for good: not acknowledged
            except (aiohttp.ClientError, TimeoutError):
                run.statuses["connection error"] += 1
            await asyncio.sleep(1.0)

    async def send(self, token: str, body_text: str, client_id: str) -> int | None:
        """Post one message until it is acknowledged, as `post` does; its inbox id (None: never acknowledged)."""
        body = {"text": body_text, "client_message_id": client_id, "wait": False}
        headers = {"Authorization": f"Bearer {token}"}
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                async with self.session.post(
                    f"{self.faa.base_url}/v1/messages", json=body, headers=headers
                ) as response:
                    if response.status < 300:
                        return int((await response.json())["message_id"])
                    if response.status < 500 and response.status != 429:
                        return None
            await asyncio.sleep(1.0)
        return None

    async def answer_s(self, token: str, body_text: str, client_id: str, timeout_s: float) -> float | None:
        """Seconds from posting the message to its reply; None when no reply came within `timeout_s`."""
        posted = time.monotonic()
        inbox_id = await self.send(token, body_text, client_id)
        while inbox_id is not None and time.monotonic() < posted + timeout_s:
            if inbox_id in self.replies.first:
                return round(self.replies.first[inbox_id] - posted, 3)
            await asyncio.sleep(0.02)
        return None


def text(number: int) -> str:
    return f"I spent {1 + number // 100}.{number % 100:02d} euros on groceries"


async def scenario(bench: Bench, name: str, offset: int) -> dict[str, Any]:
    n = bench.args.messages
    admin = await asyncpg.connect(bench.cluster.admin_dsn)
    try:
        family = await h.make_family(admin, f"Chaos {name}", ["Anna"])
    finally:
        await admin.close()
    token = family.tokens["Anna"]
    run = Run()
    copies = 3 if name == "duplicate_posts" else 1
    fault = FAULTS.get(name)
    kill_at = {int(n * (0.1 + 0.7 * k / 10)) for k in range(10)} if name == "worker_kills" else set()
    posts: list[asyncio.Task[None]] = []
    fault_task: asyncio.Task[None] | None = None
    h.progress(f"{name}: {n} messages at {bench.args.rate}/s")
    started = time.monotonic()
    for i in range(n):
        await asyncio.sleep(max(0.0, started + i / bench.args.rate - time.monotonic()))
        posts += [asyncio.create_task(bench.post(run, token, offset + i, c)) for c in range(copies)]
        if fault is not None and i == int(n * 0.3):
            fault_task = asyncio.create_task(fault(bench, run))
        if i in kill_at:
            bench.faa.kill_worker(random.randrange(WORKERS))
            run.kills += 1
            run.fault_end = time.monotonic()
    await asyncio.gather(*posts)
    if fault_task is not None:
        await fault_task
    last_ack = max(run.acked.values(), default=time.monotonic())
    numbers = {offset + i for i in range(n)}
    run.posts = n * copies
    result = await outcome(bench, family.household_id, name, numbers, run, last_ack)
    print(json.dumps(result), flush=True)
    return result


async def outcome(
    bench: Bench, household_id: int, name: str, numbers: set[int], run: Run, last_ack: float
) -> dict[str, Any]:
    """Wait until every acknowledged message is answered (or `--settle-s` passes without progress), then count."""
    by_text = {text(number): number for number in numbers}
    previous, quiet_since = -1, time.monotonic()
    while True:
        rows, stored = await _rows(bench, household_id)
        answered = {r["id"] for r in rows if bench.replies.count[r["id"]] > 0}
        acked_rows = [r for r in rows if by_text[r["text"]] in run.acked]
        if len(answered) != previous:
            previous, quiet_since = len(answered), time.monotonic()
        if len(answered) >= len(run.acked) or time.monotonic() - quiet_since > bench.args.settle_s:
            break
        await asyncio.sleep(1.0)
    counts = bench.replies.count
    first = bench.replies.first
    before_fault_end = [r["id"] for r in acked_rows if run.acked[by_text[r["text"]]] <= run.fault_end]
    result = {
        "scenario": name,
        "sent": len(numbers),
        "posts": run.posts,
        "acknowledged": len(run.acked),
        "answered_exactly_once": sum(counts[r["id"]] == 1 for r in acked_rows),
        "lost": len(run.acked) - sum(counts[r["id"]] > 0 for r in acked_rows),
        "failed": sum(r["status"] == "failed" for r in acked_rows),
        "replies_without_effect": sum(
            counts[r["id"]] > 0 and r["status"] == "done" and stored.get(r["id"], 0) == 0 for r in acked_rows
        ),
        "duplicate_effects": sum(max(0, c - 1) for c in stored.values()),
        "duplicate_sends": sum(max(0, counts[r["id"]] - 1) for r in rows),
        "kills": run.kills,
        "recovery_s": round(
            max((first.get(i, time.monotonic()) for i in before_fault_end), default=run.fault_end) - run.fault_end, 1
        )
        if run.fault_end
        else None,
        "drain_s": round(
            max((first.get(r["id"], time.monotonic()) for r in acked_rows), default=last_ack) - last_ack, 1
        ),
        "api_answers": dict(run.statuses),
        "exited_by_themselves": bench.faa.exited(),
    }
    return result


async def _rows(bench: Bench, household_id: int) -> tuple[list[asyncpg.Record], dict[int, int]]:
    """The household's inbox rows and stored memories per message, read on a connection of its own (the database
    may have restarted since the last look); nothing while it is unreachable."""
    try:
        conn = await asyncpg.connect(bench.cluster.admin_dsn, timeout=5)
    except (OSError, asyncpg.PostgresError, TimeoutError):
        return [], {}
    try:
        rows = await conn.fetch("SELECT id, text, status FROM inbox WHERE household_id = $1", household_id)
        memories = await conn.fetch(
            "SELECT source_inbox_id, count(*) AS n FROM memories WHERE household_id = $1 GROUP BY 1", household_id
        )
        return rows, {m["source_inbox_id"]: m["n"] for m in memories}
    finally:
        await conn.close()


async def fairness(bench: Bench, offset: int) -> dict[str, Any]:
    """One household's flood, and another household's message and reminder in the middle of it. The counters of
    `outcome` are the flooding household's; the other household's are named `other_…`."""
    n = bench.args.flood
    admin = await asyncpg.connect(bench.cluster.admin_dsn)
    try:
        flood = await h.make_family(admin, "Chaos fairness flood", FLOODERS)
        other = await h.make_family(admin, "Chaos fairness other", ["Olga"])
    finally:
        await admin.close()
    token = other.tokens["Olga"]
    bench.model.delay_s = bench.args.model_s
    try:
        idle_s = await bench.answer_s(token, "I spent 4.20 euros on groceries", "idle", 60)
        due = datetime.fromtimestamp(math.ceil(time.time()) + REMINDER_AFTER_S + 2, UTC)
        await bench.answer_s(token, f"Remind me at {due.isoformat()} to water the plants", "reminder", 60)
        await asyncio.sleep(max(0.0, due.timestamp() - REMINDER_AFTER_S - time.time()))
        h.progress(f"fairness: {n} messages from {len(FLOODERS)} members, model calls of {bench.args.model_s} s")
        run = Run()
        started = time.monotonic()
        during = asyncio.create_task(_other_in_flood(bench, token, flood.household_id, started + OTHER_AFTER_S))
        gate = asyncio.Semaphore(POSTERS)

        async def post(i: int) -> None:
            async with gate:
                await bench.post(run, flood.tokens[FLOODERS[i % len(FLOODERS)]], offset + i, 0)

        await asyncio.gather(*(post(i) for i in range(n)))
        acknowledged_s = time.monotonic() - started
        last_ack = max(run.acked.values(), default=time.monotonic())
        run.posts = n
        result = await outcome(bench, flood.household_id, "fairness", {offset + i for i in range(n)}, run, last_ack)
        (queued_jobs, waiting), answer_s = await asyncio.wait_for(during, bench.args.settle_s)
        reminder = await _reminder(bench, other.household_id, due)
    finally:
        bench.model.delay_s = 0.0
    rows, _ = await _rows(bench, other.household_id)
    result.update(
        {
            "flood_members": len(FLOODERS),
            "model_s": bench.args.model_s,
            "acknowledged_s": round(acknowledged_s, 1),
            "other_idle_answer_s": idle_s,
            "other_answer_s": answer_s,
            "other_answer_over_idle_s": None if idle_s is None or answer_s is None else round(answer_s - idle_s, 3),
            "flood_unanswered_when_other_posted": waiting,
            "queued_jobs_when_other_posted": queued_jobs,
            "other_sent": 3,
            "other_stored": len(rows),
            "other_lost": sum(bench.replies.count[r["id"]] == 0 for r in rows),
            **reminder,
        }
    )
    print(json.dumps(result), flush=True)
    return result


async def _other_in_flood(bench: Bench, token: str, flood_id: int, at: float) -> tuple[tuple[int, int], float | None]:
    """The other household's one message, posted at `at`: the backlog then (jobs in arq's queue, and the flood's
    messages not yet answered: most wait in the inbox for their household's turn), and its answer's latency."""
    await asyncio.sleep(max(0.0, at - time.monotonic()))
    backlog = await _backlog(bench, flood_id)
    return backlog, await bench.answer_s(token, "I spent 7.30 euros on groceries", "during", 3600)


async def _backlog(bench: Bench, household_id: int) -> tuple[int, int]:
    client = redis_asyncio.from_url(bench.redis.url)
    admin = await asyncpg.connect(bench.cluster.admin_dsn)
    try:
        jobs = int(await client.zcard("arq:queue"))
        waiting = await admin.fetchval(
            "SELECT count(*) FROM inbox WHERE household_id = $1 AND status IN ('queued', 'processing')", household_id
        )
    finally:
        await client.aclose()
        await admin.close()
    return jobs, int(waiting)


async def _reminder(bench: Bench, household_id: int, due: datetime) -> dict[str, Any]:
    """The reminder's lateness: its notification (wall clock, as it came) and its firing as recorded, after `due`;
    waits up to `--settle-s` past `due` for the notification."""
    admin = await asyncpg.connect(bench.cluster.admin_dsn)
    try:
        reminder_id = await admin.fetchval("SELECT id FROM reminders WHERE household_id = $1", household_id)
        while reminder_id not in bench.replies.notified and time.time() < due.timestamp() + bench.args.settle_s:
            await asyncio.sleep(0.2)
        fired_at = await admin.fetchval(
            "SELECT min(fired_at) FROM reminder_firings WHERE reminder_id = $1", reminder_id
        )
    finally:
        await admin.close()
    notified = bench.replies.notified.get(reminder_id) if reminder_id is not None else None
    return {
        "reminder_scheduled": reminder_id is not None,
        "reminder_late_s": None if notified is None else round(notified - due.timestamp(), 3),
        "reminder_fired_late_s": None if fired_at is None else round((fired_at - due).total_seconds(), 3),
    }


OVERSIZED_SENDER = "anna@family.example"


async def oversized(bench: Bench, offset: int) -> dict[str, Any]:
    """Large photos by email, a huge page and a normal receipt after them: what was stored, read and answered."""
    admin = await asyncpg.connect(bench.cluster.admin_dsn)
    try:
        family = await h.make_family(admin, "Chaos oversized", ["Anna"])
        code = await identities.create_invite(admin, family.household_id, family.user_ids["Anna"])
        await identities.redeem_invite(admin, code, "email", OVERSIZED_SENDER)
    finally:
        await admin.close()
    h.progress("oversized: drawing the photos")
    small, large, page, receipt = await asyncio.to_thread(
        lambda: (mail.noise_photo(3_000_000), mail.noise_photo(20_000_000), mail.page(49), mail.receipt())
    )
    plan = [
        ("photo 3 MB", "webhook", small),
        ("photo 20 MB", "webhook", large),
        ("photo 3 MB", "smtp", small),
        ("photo 20 MB", "smtp", large),
        ("page 49 MP", "webhook", page),
        ("receipt", "webhook", receipt),
    ]
    items: list[dict[str, Any]] = []
    for label, via, data in plan:
        subject = f"Oversized {label} by {via}"
        raw = mail.message(OVERSIZED_SENDER, subject, label.replace(" ", "-") + ".png", data)
        if via == "webhook":
            intake = await _webhook(bench, raw)
        else:
            intake = await asyncio.to_thread(mail.smtp_send, bench.faa.smtp_port, OVERSIZED_SENDER, raw)
        h.progress(f"oversized: {subject} ({len(raw):,} bytes): {intake}")
        items.append({"subject": subject, "photo_bytes": len(data), "message_bytes": len(raw), "intake": intake})
    rows = await _answered(bench, family.household_id, sum(_acknowledged(i) for i in items))
    for item in items:
        row = next((r for r in rows if item["subject"] in r["text"]), None)
        item.update(
            stored=row is not None,
            photos_stored=0 if row is None else row["media"],
            answered=row is not None and row["sent"] > 0,
            photo_read=_photo_read(bench.model.read, item["subject"]),
        )
    acknowledged = [i for i in items if _acknowledged(i)]
    result = {
        "scenario": "oversized",
        "ocr": _ocr(bench.model.read, items[-1]["subject"]),
        "sent": len(items),
        "acknowledged": len(acknowledged),
        "stored": sum(i["stored"] for i in items),
        "answered": sum(i["answered"] for i in items),
        "lost": sum(not i["answered"] for i in acknowledged),
        "refused": sum(not _acknowledged(i) and not _retried(i) for i in items),
        "retried_by_sender": sum(_retried(i) for i in items),
        "emails_sent_by_faa": len(bench.relay.sent),
        "items": items,
        "exited_by_themselves": bench.faa.exited(),
    }
    print(json.dumps(result), flush=True)
    return result


async def _webhook(bench: Bench, raw: bytes, tries: int = 3) -> str:
    """Post the message to the signed webhook, again (newly signed) after a 5xx or a broken connection, as a
    provider retries; the last answer."""
    answer = ""
    for _ in range(tries):
        try:
            async with bench.session.post(
                f"{bench.faa.base_url}/v1/email/inbound/mime",
                data=mail.signed_form(raw),
                timeout=aiohttp.ClientTimeout(total=300),
            ) as response:
                answer = f"{response.status} {' '.join((await response.text()).split())[:80]}"
                if response.status < 500:
                    return answer
        except (aiohttp.ClientError, TimeoutError) as exc:
            answer = f"error {type(exc).__name__}"
        await asyncio.sleep(2.0)
    return f"{answer} ({tries} tries)"


def _acknowledged(item: dict[str, Any]) -> bool:
    return str(item["intake"]).startswith(("200", "250"))


def _retried(item: dict[str, Any]) -> bool:
    """Answered so that the sender tries again later (webhook 5xx or no answer, SMTP 4xx): for the same bytes every
    try fails alike, and a provider drops the message when its retries run out (Mailgun: ~8 hours)."""
    intake = str(item["intake"])
    if item["subject"].endswith("by smtp"):
        return intake.startswith(("4", "error"))
    return intake.startswith(("5", "error"))


async def _answered(bench: Bench, household_id: int, expected: int) -> list[asyncpg.Record]:
    """The household's inbox rows with their stored photos and sent replies, once `expected` rows are finished and
    answered (or `--settle-s` passed without progress)."""
    previous, quiet_since = -1, time.monotonic()
    while True:
        admin = await asyncpg.connect(bench.cluster.admin_dsn)
        try:
            rows = await admin.fetch(
                """SELECT i.id, i.text, i.status,
                          (SELECT count(*) FROM media m WHERE m.source_inbox_id = i.id) AS media,
                          (SELECT count(*) FROM outbox o WHERE o.inbox_id = i.id AND o.status = 'sent') AS sent
                   FROM inbox i WHERE i.household_id = $1""",
                household_id,
            )
        finally:
            await admin.close()
        answered = sum(r["sent"] > 0 and r["status"] in ("done", "failed") for r in rows)
        if answered != previous:
            previous, quiet_since = answered, time.monotonic()
        if answered >= expected or time.monotonic() - quiet_since > bench.args.settle_s:
            return rows
        await asyncio.sleep(1.0)


def _photo_read(read: list[str], subject: str) -> str | None:
    """What the engine made of the message's photo, from the text it handed the model."""
    seen = next((t for t in read if subject in t), None)
    if seen is None:
        return None
    if match := re.search(r"\[image[^\]]*, text extracted\]\n(.*)", seen, re.S):
        return "text: " + " ".join(match.group(1).split())[:120]
    if match := re.search(r"could not be read — ([^\]]*)\]", seen):
        return "unread: " + match.group(1)
    return "no text" if "without readable text" in seen else seen[-120:]


def _ocr(read: list[str], receipt_subject: str) -> str:
    if importlib.util.find_spec("rapidocr") is None:
        return "unavailable"
    seen = next((t for t in read if receipt_subject in t), "")
    return "read" if "TOTAL" in seen.upper() and "3.68" in seen else "not read"


OWN_SCENARIOS: dict[str, Callable[[Bench, int], Awaitable[dict[str, Any]]]] = {
    "fairness": fairness,
    "oversized": oversized,
}


async def _web_kill(bench: Bench, run: Run) -> None:
    bench.faa.kill_web()
    run.kills, run.fault_end = 1, time.monotonic()


async def _redis_restart(bench: Bench, run: Run) -> None:
    bench.redis.kill()
    await asyncio.sleep(5)
    bench.redis.start()
    run.kills, run.fault_end = 1, time.monotonic()


async def _postgres_freeze(bench: Bench, run: Run) -> None:
    await faults.freeze_postgres(bench.cluster.data_dir, bench.args.freeze_s)
    run.fault_end = time.monotonic()


async def _postgres_immediate(bench: Bench, run: Run) -> None:
    await asyncio.to_thread(faults.restart_postgres_immediately, bench.server, bench.cluster.data_dir)
    run.kills, run.fault_end = 1, time.monotonic()


FAULTS: dict[str, Callable[[Bench, Run], Coroutine[Any, Any, None]]] = {
    "web_kill": _web_kill,
    "redis_restart": _redis_restart,
    "postgres_freeze": _postgres_freeze,
    "postgres_immediate": _postgres_immediate,
}


async def _ready(bench: Bench) -> None:
    """The web API answers /health and the workers answer a first message."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        with contextlib.suppress(aiohttp.ClientError):
            async with bench.session.get(f"{bench.faa.base_url}/health") as response:
                if response.status == 200:
                    break
        await asyncio.sleep(0.5)
    admin = await asyncpg.connect(bench.cluster.admin_dsn)
    try:
        family = await h.make_family(admin, "Chaos warm-up", ["Anna"])
    finally:
        await admin.close()
    await bench.post(Run(), family.tokens["Anna"], 0, 0)
    while not bench.replies.count and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    h.progress(f"web API and {WORKERS} workers up")


@contextlib.contextmanager
def postgres() -> Iterator[tuple[h.Cluster, Any]]:
    """The embedded cluster and its handle (the immediate restart needs it), deleted on exit."""
    root = Path(tempfile.mkdtemp(prefix="faa-chaos-pg-"))
    server = local_postgres.start(root / "data", temporary=True)
    admin = server.get_uri()
    try:
        yield h.Cluster(admin, dsn_with_user(admin, h.APP_ROLE), root / "data"), server
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


def email_settings(relay: mail.Relay) -> dict[str, str]:
    """The email channel on: its signed webhook, its SMTP receiver, and replies through the bench's relay."""
    return {
        "EMAIL_ADDRESS": mail.FAA_ADDRESS,
        "EMAIL_WEBHOOK_SIGNING_KEY": mail.SIGNING_KEY,
        "EMAIL_SMTP_PORT": str(h.free_port()),
        "EMAIL_RELAY_HOST": "127.0.0.1",
        "EMAIL_RELAY_PORT": str(relay.port),
        "EMAIL_RELAY_TLS": "none",
    }


async def main(args: argparse.Namespace) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    with postgres() as (cluster, server):
        await h.migrate_cluster(cluster)
        redis = faults.RedisServer()
        redis.start()
        relay = mail.Relay(h.free_port())
        relay.start()
        async with h.fake_llm() as llm:
            scripted = Model()
            llm.script(scripted)
            faa = faults.Faa.configured(cluster, redis.url, llm.base_url, email=email_settings(relay))
            replies = Replies(redis.url)
            listener = asyncio.create_task(replies.listen())
            faa.start_web()
            faa.start_workers(WORKERS)
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
                bench = Bench(args, cluster, server, redis, faa, replies, session, scripted, relay)
                try:
                    await _ready(bench)
                    names = [s for s in SCENARIOS if not args.only or s in args.only.split(",")]
                    for index, name in enumerate(names):
                        offset = (index + 1) * 100_000
                        own = OWN_SCENARIOS.get(name)
                        results.append(await (own(bench, offset) if own else scenario(bench, name, offset)))
                finally:
                    listener.cancel()
                    faa.stop()
                    redis.kill()
                    relay.stop()
    return {
        "scenarios": results,
        "messages_per_scenario": args.messages,
        "flood": args.flood,
        "model_s": args.model_s,
        "workers": WORKERS,
    }


def _summary(result: dict[str, Any]) -> str:
    return "; ".join(_line(r) for r in result["scenarios"])


def _line(r: dict[str, Any]) -> str:
    if r["scenario"] == "fairness":
        return (
            f"fairness: other household answered in {r['other_answer_s']} s (idle {r['other_idle_answer_s']} s), "
            f"reminder {r['reminder_late_s']} s late, lost {r['lost']} + {r['other_lost']}"
        )
    if r["scenario"] == "oversized":
        return (
            f"oversized: {r['stored']}/{r['sent']} stored, {r['answered']} answered, lost {r['lost']}, "
            f"refused {r['refused']}, retried by the sender {r['retried_by_sender']}, ocr {r['ocr']}"
        )
    return (
        f"{r['scenario']}: lost {r['lost']}, without effect {r['replies_without_effect']}, "
        f"duplicate effects {r['duplicate_effects']}, duplicate sends {r['duplicate_sends']} (kills {r['kills']})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=1000, help="messages per scenario")
    parser.add_argument("--quick", action="store_true", help="150 messages per scenario and a 10 s freeze")
    parser.add_argument("--rate", type=float, default=15.0, help="messages posted per second")
    parser.add_argument("--freeze-s", type=float, default=30.0, help="how long PostgreSQL stays SIGSTOPped")
    parser.add_argument("--settle-s", type=float, default=300.0, help="give up waiting after this long without a reply")
    parser.add_argument("--only", default="", help="comma-separated scenarios: " + ",".join(SCENARIOS))
    parser.add_argument("--flood", type=int, default=5000, help="messages the flooding household sends (fairness)")
    parser.add_argument("--model-s", type=float, default=0.5, help="how long each model call takes (fairness)")
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.messages, arguments.freeze_s = 150, 10.0
    sys.exit(h.run_benchmark(main(arguments), _summary))
