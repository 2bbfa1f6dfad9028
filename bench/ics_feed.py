"""What a calendar feed costs to write and an .ics import to read, with the `icalendar` package: a household's
feed of N events (a tenth repeating, a tenth all-day, in two timezones) written by `tools.infra.ics.calendar`, and
the same file read back by `tools.infra.ics.read`, as the feed endpoint and the import do (no database).

    .venv/bin/python bench/ics_feed.py [--events 500 2000] [--rounds 5]

The last stdout line is the JSON of the figures (reported, never asserted).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tools.infra import ics  # noqa: E402

START = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)


def events(count: int) -> list[ics.IcsEvent]:
    made = []
    for n in range(count):
        starts = START + timedelta(hours=7 * n)
        made.append(
            ics.IcsEvent(
                uid=f"bench-{n}@faa",
                title=f"Event {n}: dentist, football or school",
                starts_at=starts,
                ends_at=starts + timedelta(hours=1),
                all_day=n % 10 == 5,
                timezone="Asia/Shanghai" if n % 3 == 0 else "Europe/Berlin",
                rrule="FREQ=WEEKLY;BYDAY=TU" if n % 10 == 0 else None,
            )
        )
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    figures = {}
    for count in args.events:
        items = events(count)
        writes, reads, size = [], [], 0
        for _ in range(args.rounds):
            started = time.perf_counter()
            data = ics.calendar("Bench family", items, stamp=START)
            writes.append(time.perf_counter() - started)
            started = time.perf_counter()
            parsed = ics.read(data, "Europe/Berlin")
            reads.append(time.perf_counter() - started)
            size = len(data)
            assert len(parsed) == count
        figures[str(count)] = {
            "write_ms_median": round(statistics.median(writes) * 1000, 1),
            "read_ms_median": round(statistics.median(reads) * 1000, 1),
            "bytes": size,
        }
        print(
            f"{count} events: write {figures[str(count)]['write_ms_median']} ms, "
            f"read {figures[str(count)]['read_ms_median']} ms, {size} bytes"
        )
    print(json.dumps({"ics_feed": figures}))


if __name__ == "__main__":
    main()
