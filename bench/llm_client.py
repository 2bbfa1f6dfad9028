"""CPU the `openai` client spends per call, as FAA calls it and as the SDK's typed methods would.

    .venv/bin/python bench/llm_client.py [--calls 400] [--rounds 3]

The scripted OpenAI-compatible server of the tests runs in a child process, so this process's CPU time
(`time.process_time`) is the client's alone: building the request, HTTP, and reading the answer. Each way is
measured in alternating rounds (the machine is noisy) and the median round is reported, in microseconds:

- `chat_typed_httpx_us`: `chat.completions.create` on the SDK's default transport (httpx), answer built into
  `ChatCompletion` models;
- `chat_faa_us`: what `engine.llm.OpenAILLM.complete` does: the same typed call on the SDK's aiohttp transport
  (`engine.llm.openai_client`);
- `embed_typed_httpx_us` / `embed_faa_us`: the same for one 384-dimensional embedding
  (`tools.infra.embeddings.OpenAIEmbedder`).

The request is a long model call's size: a 6,000-character system prompt, the message, a JSON schema.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)
import openai  # noqa: E402

from engine.llm import openai_client  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI, Scripted  # noqa: E402

DIM = 384
ANSWER = {"intent": "record", "reply": "Noted: 35.50 EUR for groceries at Lidl.", "steps": [{"tool": "store"}]}
BODY: dict[str, Any] = {
    "model": "m",
    "messages": [
        {"role": "system", "content": "You are FAA. " * 460},
        {"role": "user", "content": "I spent 35.50 euros on groceries at Lidl"},
    ],
    "temperature": 0.2,
    "response_format": {
        "type": "json_schema",
        "json_schema": {"name": "analysis", "schema": {"type": "object"}, "strict": False},
    },
}
EMBED_BODY = {"model": "e", "input": ["groceries at Lidl"], "encoding_format": "float"}


def _serve(port_out: Any, stop: Any) -> None:
    """The child process: the tests' scripted server, answering every chat call with ANSWER."""

    async def run() -> None:
        fake = FakeOpenAI(embedding_dim=DIM)
        fake.script(lambda request: Scripted.json(ANSWER))
        port_out.send(await fake.start())
        await asyncio.get_running_loop().run_in_executor(None, stop.recv_bytes)  # returns when the parent closes
        await fake.stop()

    try:
        asyncio.run(run())
    except EOFError:
        pass


async def _cpu_per_call(call: Callable[[], Awaitable[Any]], calls: int) -> float:
    started = time.process_time()
    for _ in range(calls):
        await call()
    return (time.process_time() - started) / calls * 1e6


async def run(args: argparse.Namespace) -> dict[str, Any]:
    spawn = multiprocessing.get_context("spawn")
    base_url_in, base_url_out = spawn.Pipe(duplex=False)
    stop_in, stop_out = spawn.Pipe(duplex=False)
    child = spawn.Process(target=_serve, args=(base_url_out, stop_in))
    child.start()
    base_url = await asyncio.to_thread(base_url_in.recv)
    typed = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0)
    faa = openai_client(base_url, None, timeout_s=30, max_retries=0)
    ways: dict[str, Callable[[], Awaitable[Any]]] = {
        "chat_typed_httpx_us": lambda: typed.chat.completions.create(**BODY),
        "chat_faa_us": lambda: faa.chat.completions.create(**BODY),
        "embed_typed_httpx_us": lambda: typed.embeddings.create(**EMBED_BODY),
        "embed_faa_us": lambda: faa.embeddings.create(**EMBED_BODY),
    }
    rounds: dict[str, list[float]] = {name: [] for name in ways}
    try:
        for call in ways.values():  # warm-up: connections, imports, caches
            await _cpu_per_call(call, 20)
        for number in range(args.rounds):
            for name, call in ways.items():
                rounds[name].append(await _cpu_per_call(call, args.calls))
            h.progress(f"round {number + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1]:.0f}" for k, v in rounds.items()))
    finally:
        await typed.close()
        await faa.close()
        stop_out.close()
        await asyncio.to_thread(child.join, 15)
    result: dict[str, Any] = {name: round(statistics.median(values)) for name, values in rounds.items()}
    result.update(calls_per_round=args.calls, rounds=args.rounds, embedding_dim=DIM)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=400, help="calls per way and round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; the median is reported")
    args = parser.parse_args()
    if not (10 <= args.calls <= 10_000 and 1 <= args.rounds <= 20):
        parser.error("--calls must be 10..10000, --rounds 1..20")
    return h.run_benchmark(
        run(args),
        lambda r: (
            f"client CPU per chat call: {r['chat_faa_us']} us as FAA calls it, {r['chat_typed_httpx_us']} us typed "
            f"on httpx; per embedding call: {r['embed_faa_us']} us, {r['embed_typed_httpx_us']} us"
        ),
        runner=asyncio.run,
    )


if __name__ == "__main__":
    raise SystemExit(main())
