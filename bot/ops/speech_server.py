"""The local speech-to-text server: a Whisper model (faster-whisper on CTranslate2) behind a loopback HTTP server
that speaks OpenAI's `/v1/audio/transcriptions`, so the engine's speech client has one code path.

It runs in the local model environment (`bot.ops.local_models`), started by path as a script: it imports only the
standard library and, once started for real, faster_whisper (which decodes OGG/Opus, MP3, WAV… through PyAV).

    python speech_server.py --model-dir DIR --port 18082 [--threads 2] [--languages en,zh]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import threading
from collections.abc import Callable, Sequence
from email.message import Message
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_UPLOAD = 25 * 1024 * 1024  # OpenAI's own limit for one file
ROUTE = "/v1/audio/transcriptions"
# Whisper writes Chinese in traditional or simplified characters at random; a simplified prompt settles it.
_PROMPTS = {"zh": "以下是普通话的句子。"}

Transcribe = Callable[[bytes, "str | None"], str]  # (audio, language or None: detect) -> text


class BadRequest(Exception):
    pass


def form_fields(content_type: str, body: bytes) -> dict[str, bytes]:
    """The fields of a multipart/form-data body by name (a file's bytes, a text field's UTF-8)."""
    if not content_type.lower().startswith("multipart/form-data"):
        raise BadRequest("expected multipart/form-data with a 'file' field")
    message = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
    )
    parts = message.get_payload()
    if not message.is_multipart() or not isinstance(parts, list):
        raise BadRequest("the multipart body could not be read")
    fields: dict[str, bytes] = {}
    for part in parts:
        if not isinstance(part, Message):
            continue
        name = _field_name(part)
        payload = part.get_payload(decode=True)
        if name and isinstance(payload, bytes):
            fields[name] = payload
    return fields


def _field_name(part: Message) -> str | None:
    name = part.get_param("name", header="content-disposition")
    return name if isinstance(name, str) else None


def _handler(transcribe: Transcribe, model: str, lock: threading.Lock) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

        def _json(self, status: int, body: object) -> None:
            data = json.dumps(body, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._json(status, {"error": {"message": message, "type": "invalid_request_error"}})

        def do_GET(self) -> None:
            if self.path == "/health":
                self._json(200, {"status": "ok"})
            elif self.path == "/v1/models":
                self._json(200, {"object": "list", "data": [{"id": model, "object": "model"}]})
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if self.path != ROUTE:
                self.rfile.read(length)
                self._error(404, f"no route {self.path}")
                return
            if length > MAX_UPLOAD:
                self.close_connection = True
                self._error(413, f"the audio is larger than {MAX_UPLOAD // 2**20} MB")
                return
            try:
                fields = form_fields(self.headers.get("Content-Type", ""), self.rfile.read(length))
                audio = fields.get("file")
                if not audio:
                    raise BadRequest("no 'file' field with audio")
                language = fields.get("language", b"").decode(errors="replace").strip() or None
                with lock:  # one at a time: the model uses every thread it was given
                    text = transcribe(audio, language)
            except BadRequest as exc:
                self._error(400, str(exc))
                return
            except Exception as exc:  # the model failed: said to the caller (who may try again), logged here
                print(f"speech server: transcription failed: {exc!r}", file=sys.stderr, flush=True)
                self._error(500, f"transcription failed ({type(exc).__name__})")
                return
            self._json(200, {"text": text})

    return Handler


def make_server(transcribe: Transcribe, port: int, *, model: str, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    server = ThreadingHTTPServer((host, port), _handler(transcribe, model, threading.Lock()))
    server.daemon_threads = True
    return server


class WhisperTranscriber:
    """faster-whisper on the CPU with int8 weights; the language is the one asked for, or the likeliest of
    `languages` (a family's languages: detection among all 99 mistakes a short note for a neighbour's)."""

    def __init__(self, model_dir: str, *, threads: int, languages: Sequence[str]) -> None:
        from faster_whisper import WhisperModel  # type: ignore[import-not-found,unused-ignore]

        self._model = WhisperModel(model_dir, device="cpu", compute_type="int8", cpu_threads=threads)
        self._languages = tuple(languages)

    def __call__(self, audio: bytes, language: str | None) -> str:
        from faster_whisper.audio import decode_audio  # type: ignore[import-not-found,unused-ignore]

        try:
            samples = decode_audio(io.BytesIO(audio))
        except Exception as exc:  # PyAV's errors for a file it cannot read: the caller's input, not a crash
            raise BadRequest(f"the audio could not be decoded ({type(exc).__name__})") from exc
        if len(samples) == 0:
            raise BadRequest("the audio is empty")
        language = language or self._likeliest_language(samples)
        segments, _ = self._model.transcribe(
            samples,
            language=language,
            beam_size=5,
            condition_on_previous_text=False,  # a voice note is short; this keeps one misheard phrase from looping
            without_timestamps=True,
            initial_prompt=_PROMPTS.get(language or ""),
        )
        return "".join(segment.text for segment in segments).strip()

    def _likeliest_language(self, samples: Any) -> str | None:
        if len(self._languages) == 1:
            return self._languages[0]
        if not self._languages:
            return None
        _, _, probabilities = self._model.detect_language(samples)
        scores = dict(probabilities)
        return max(self._languages, key=lambda code: scores.get(code, 0.0))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--model-name", default="whisper-base")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--languages", default="", help="comma-separated ISO 639-1 codes; empty: any language")
    options = parser.parse_args(argv)
    languages = [code.strip() for code in options.languages.split(",") if code.strip()]
    transcribe = WhisperTranscriber(options.model_dir, threads=options.threads, languages=languages)
    server = make_server(transcribe, options.port, model=options.model_name, host=options.host)
    print(f"speech server: {options.model_name} listening on {options.host}:{options.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
