"""Stopping a long run at once: Ctrl-C or SIGTERM, then every child process of ours is killed.

The bench's runs start other programs — verifiers, coding agents, model workers — some in their
own process groups (so a timeout can kill a whole agent tree). On a stop those must die within a
second, whichever thread started them; this module finds them through ``/proc`` (Linux) rather
than relying on every caller to have registered its children.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class Stopped(KeyboardInterrupt):
    """Ctrl-C or SIGTERM arrived; ``signum`` says which."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _cmdline(pid: int) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return ""


def child_pids(parent: int | None = None) -> list[int]:
    """Direct children of ``parent`` (default: this process), from ``/proc``; [] elsewhere."""
    parent = os.getpid() if parent is None else parent
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # Field 4 (ppid) follows the command name, which may itself contain spaces or ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == parent:
            found.append(int(entry))
    return found


def kill_child_processes() -> int:
    """SIGKILL every child of this process, and the whole group of each child that leads one.

    Python's own multiprocessing resource tracker is spared (killing it only makes noise).
    Returns how many children were found."""
    me = os.getpgrp()
    pids = [p for p in child_pids() if "resource_tracker" not in _cmdline(p)]
    for pid in pids:
        try:
            group = os.getpgid(pid)
            if group != me and group == pid:
                os.killpg(group, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
    return len(pids)


@contextmanager
def signals_raise_stopped() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise ``Stopped`` in the main thread."""

    def handler(signum: int, _frame: object) -> None:
        raise Stopped(signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
