"""Stopping a long run at once: Ctrl-C or SIGTERM, then every child process of ours is killed.

The bench's runs start other programs — verifiers, coding agents, model workers — some in their
own process groups (so a timeout can kill a whole agent tree). On a stop those must die within a
second, whichever thread started them; this module finds them through ``/proc`` (Linux) rather
than relying on every caller to have registered its children.
"""

from __future__ import annotations

import os
import signal
import threading
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


@contextmanager
def signals_held() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM wait; the first that came is delivered when it ends.

    For a few steps that must happen together or not at all (a finished run written to the
    journal *and* counted): a stop that lands between them would make the two disagree. In a
    thread other than the main one (where no handler runs) this holds nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def hold(signum: int, _frame: object) -> None:
        came.append(signum)

    old_int = signal.signal(signal.SIGINT, hold)
    try:
        old_term = signal.signal(signal.SIGTERM, hold)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, old_term)
    finally:
        signal.signal(signal.SIGINT, old_int)
    if came:
        old = old_int if came[0] == signal.SIGINT else old_term
        if callable(old):
            old(came[0], None)
        else:
            signal.raise_signal(came[0])
