"""The log stream: one JSON object per line, also when several processes share one stderr (WEB_PROCESSES > 1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LINES = 10_000
_LOGGING_PROCESS = f"""
import sys
import structlog
from engine.observability import configure_logging
from engine.settings import LogSettings

configure_logging(LogSettings(level="INFO"))
log = structlog.get_logger()
sys.stdin.read()  # start together: the test closes both stdins once both processes are up
for number in range({LINES}):
    log.info("message.received", channel="web", inbox_id=number, household_id=1, duplicate=False, duration_ms=0.5)
"""


def test_two_processes_logging_to_one_stderr_write_whole_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "stderr.log"
    with path.open("ab") as shared:  # one open file, as a container's log pipe is shared by its web processes
        processes = [
            subprocess.Popen([sys.executable, "-c", _LOGGING_PROCESS], stdin=subprocess.PIPE, stderr=shared, cwd=REPO)
            for _ in range(2)
        ]
        for process in processes:
            assert process.stdin is not None
            process.stdin.close()
        assert [process.wait(60) for process in processes] == [0, 0]
    lines = path.read_text().splitlines()
    events = [json.loads(line) for line in lines]  # a line cut by the other process's write fails here
    assert len(events) == 2 * LINES
    assert sorted(event["inbox_id"] for event in events) == sorted(2 * list(range(LINES)))
    assert {event["event"] for event in events} == {"message.received"}


_AWKWARD_VALUES = """
import structlog
from engine.observability import configure_logging
from engine.settings import LogSettings

configure_logging(LogSettings(level="INFO"))
log = structlog.get_logger()
log.info("email.header.undecodable", subject="caf\\udce9", amounts={2026: 3}, big=2**70, obj=object())
log.info("message.received", text="Grüße")
"""


def test_values_orjson_refuses_are_still_logged_as_json_lines() -> None:
    done = subprocess.run([sys.executable, "-c", _AWKWARD_VALUES], capture_output=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    awkward, plain = (json.loads(line) for line in done.stderr.decode().splitlines())
    assert awkward["subject"] == "caf\udce9"  # a lone surrogate, as surrogateescape leaves an undecodable byte
    assert awkward["amounts"] == {"2026": 3}
    assert awkward["big"] == 2**70
    assert awkward["obj"].startswith("<object object at")
    assert plain["text"] == "Grüße"
