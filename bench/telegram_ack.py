"""Time to acknowledge a Telegram update: secret check, aiogram parse, routers, identity lookup, inbox commit,
enqueue, 200 — measured client-side against the web API on a real TCP socket (no worker runs).

    .venv/bin/python bench/telegram_ack.py [--concurrency 100] [--rounds 3]

Members are linked as Telegram users first; every update is a private text message from one of them. The last
stdout line is the JSON of the figures (reported, never asserted).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)
import aiohttp  # noqa: E402
import asyncpg  # noqa: E402

from bot.channels.telegram.webhook import SECRET_HEADER  # noqa: E402
from engine.channel_settings import ChannelSettings, TelegramSettings  # noqa: E402
from tests.bot.channels.telegram import updates  # noqa: E402
from tests.fakes.telegram_server import TOKEN, FakeTelegram  # noqa: E402
from tools.storage import identities  # noqa: E402

REDIS_DB = 14
SECRET = "bench-secret"
MEMBERS = ("Anna", "Ben", "Tom", "Lea")


async def post(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> tuple[float, bool]:
    started = time.perf_counter()
    async with session.post(url, json=body, headers={SECRET_HEADER: SECRET}) as response:
        await response.read()
        ok = response.status == 200
    return (time.perf_counter() - started) * 1000, ok


async def body(concurrency: int, rounds: int) -> dict[str, Any]:
    with h.postgres_cluster() as cluster:
        await h.migrate_cluster(cluster)
        telegram = FakeTelegram()
        await telegram.start()
        async with h.fake_llm() as llm, h.redis_db(REDIS_DB) as redis:
            settings = h.make_settings(cluster, llm.base_url, redis).model_copy(
                update={
                    "telegram": TelegramSettings(
                        bot_token=TOKEN, webhook_secret=SECRET, api_base=telegram.base_url, bot_username="faa_bot"
                    ),
                    "channel": ChannelSettings(messages_per_minute=100_000),
                }
            )
            admin = await asyncpg.connect(cluster.admin_dsn)
            family = await h.make_family(admin, "Bench", MEMBERS)
            users = []
            for member in MEMBERS:
                code = await identities.create_invite(admin, family.household_id, family.user_ids[member])
                users.append(updates.new_id())
                await identities.redeem_invite(admin, code, "telegram", str(users[-1]))
            await admin.close()
            async with h.web_server(settings) as web, aiohttp.ClientSession() as session:
                url = f"{web.base_url}/telegram/webhook"
                message = [updates.message(users[n % len(users)], f"I spent {n} euros on bread") for n in range(20)]
                await asyncio.gather(*(post(session, url, m) for m in message))  # warm-up
                sequential = [await post(session, url, updates.message(users[n % 4], "hello")) for n in range(100)]
                burst: list[tuple[float, bool]] = []
                for number in range(rounds):
                    batch = [updates.message(users[n % 4], f"burst {number} {n}") for n in range(concurrency)]
                    burst += await asyncio.gather(*(post(session, url, m) for m in batch))
                    h.progress(f"burst {number + 1}/{rounds}: {concurrency} concurrent updates")
        await telegram.stop()
    seq_ms = [ms for ms, ok in sequential if ok]
    burst_ms = [ms for ms, ok in burst if ok]
    return {
        "sequential_ack_p50_ms": round(h.percentile(seq_ms, 50), 2),
        "sequential_ack_p99_ms": round(h.percentile(seq_ms, 99), 2),
        "burst_ack_p50_ms": round(h.percentile(burst_ms, 50), 2),
        "burst_ack_p99_ms": round(h.percentile(burst_ms, 99), 2),
        "errors": sum(not ok for _, ok in sequential + burst),
        "concurrency": concurrency,
        "rounds": rounds,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    return h.run_benchmark(
        body(args.concurrency, args.rounds),
        lambda r: f"telegram ack: sequential p50 {r['sequential_ack_p50_ms']} ms, burst p99 {r['burst_ack_p99_ms']} ms",
    )


if __name__ == "__main__":
    sys.exit(main())
