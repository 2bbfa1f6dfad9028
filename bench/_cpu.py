"""CPU time of a process and everything it started, read from Linux's /proc: what a server spent on a burst.

The time comes from each thread's `schedstat` (nanoseconds on the CPU), not from `stat`'s utime/stime, whose
10 ms ticks are coarser than a whole burst of one server process. The tree is walked again at every reading, so a
process started in between (a new database backend) counts from zero; one that ended in between loses what it
spent, which for the servers measured here (long-lived web processes and pooled backends) does not happen.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

_PROC = Path("/proc")


def available() -> bool:
    """Whether this kernel reports per-thread CPU time (`CONFIG_SCHED_INFO`)."""
    return (_PROC / "self" / "schedstat").exists()


def tree(root: int) -> list[int]:
    """`root` and all its descendants that are alive now."""
    children: dict[int, list[int]] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # ended while we looked
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")".
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def seconds(pids: Iterable[int]) -> dict[int, float]:
    """CPU seconds each process has spent so far, all its threads together; ended processes are left out."""
    spent = {}
    for pid in pids:
        total = 0
        try:
            for task in (_PROC / str(pid) / "task").iterdir():
                total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError):
            continue
        spent[pid] = total / 1e9
    return spent


class TreeCPU:
    """CPU seconds a process tree spends between `start()` and `stop()`, added up over several such spans."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.total = 0.0
        self._before: dict[int, float] = {}

    def start(self) -> None:
        self._before = seconds(tree(self.root))

    def stop(self) -> float:
        """The span's CPU seconds (also added to `total`)."""
        after = seconds(tree(self.root))
        spent = sum(now - self._before.get(pid, 0.0) for pid, now in after.items())
        self.total += spent
        return spent
