"""What a running bench must be able to stop and clean up: its attempters, their children, its
temporary folders. Ctrl-C or SIGTERM reaches the main thread; the runs live in worker threads,
so stopping them is cooperative (no new attempt starts) plus forceful (every child killed)."""

from __future__ import annotations

import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reference_loop._attempters.base import AttemptOutcome
from reference_loop._process.stop import kill_child_processes

STOP_GRACE = 1.5  # seconds the runs in flight get to wind down after Ctrl-C or SIGTERM


class BenchStopped(Exception):
    """Raised inside a run's thread when the bench is stopping: the loop unwinds and restores."""


@dataclass
class Guarded:
    """An attempter that refuses to start an attempt once the bench is stopping."""

    inner: Any
    stop: threading.Event
    name: str = ""

    def __post_init__(self) -> None:
        self.name = self.inner.name

    def attempt(self, prompt: str, workspace: Path, *, attempt: int) -> AttemptOutcome:
        if self.stop.is_set():
            raise BenchStopped
        outcome = self.inner.attempt(prompt, workspace, attempt=attempt)
        if self.stop.is_set():
            raise BenchStopped
        return outcome


@dataclass
class Live:
    """What the running bench must be able to stop or clean up from the main thread."""

    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    objects: dict[int, Any] = field(default_factory=dict)
    tmpdirs: set[str] = field(default_factory=set)

    def add(self, att: Any) -> None:
        with self.lock:
            self.objects[id(att)] = att

    def discard(self, att: Any) -> None:
        with self.lock:
            self.objects.pop(id(att), None)

    def stop_all(self) -> None:
        self.stop.set()
        with self.lock:
            live = list(self.objects.values())
        for att in live:
            stopper = getattr(att, "stop", None)
            if callable(stopper):
                stopper()
        kill_child_processes()

    def remove_tmpdirs(self) -> None:
        with self.lock:
            dirs = list(self.tmpdirs)
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)


def close_attempter(att: Any) -> None:
    closer = getattr(att, "close", None)
    if callable(closer):
        closer()


@contextmanager
def private_tempdir() -> Iterator[None]:
    """Every temporary file and folder of the runs (workspaces, git indexes, verifier logs, model
    worker logs) goes under one folder that is removed at the end, so a stop that cannot wait for
    a run to unwind still leaves nothing behind. The runs' threads share the process, so the
    setting is process-wide for the duration of the bench."""
    root = tempfile.mkdtemp(prefix="reference-loop-bench-")
    saved = tempfile.tempdir
    tempfile.tempdir = root
    try:
        yield
    finally:
        tempfile.tempdir = saved
        shutil.rmtree(root, ignore_errors=True)


def stop_runs(
    live: Live,
    threads: Sequence[threading.Thread],
    done: queue.Queue,
    record: Callable[[Any], None],
    *,
    unwind_first: float = 0.0,
) -> list:
    """Stop now: no new attempt, every child killed, ``STOP_GRACE`` for the runs in flight to
    unwind, their workspaces removed. Returns the runs that finished meanwhile (each recorded).

    ``unwind_first``: seconds the threads get to stop their runs themselves before this
    process's children are killed (an executor's threads, whose children may be the cluster
    they started and must shut down)."""
    if unwind_first > 0:
        live.stop.set()
        deadline = time.monotonic() + unwind_first
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
    live.stop_all()
    deadline = time.monotonic() + STOP_GRACE
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    finished = []
    while (got := take_finished(done, record, wait=0.0)) is not None:
        if not isinstance(got, BaseException):
            finished.append(got[0])
    live.remove_tmpdirs()
    return finished


def take_finished(
    done: queue.Queue, record: Callable[[Any], None], *, wait: float
) -> tuple[Any, str] | BaseException | None:
    """One finished run off ``done``, recorded before it is returned as ``(outcome, where)``;
    a worker's exception as it was raised; None when nothing finished within ``wait`` seconds.
    A caller that must not lose a run to a signal holds signals around this and its count."""
    try:
        got = done.get(timeout=wait) if wait > 0 else done.get_nowait()
    except queue.Empty:
        return None
    if not isinstance(got, BaseException):
        record(got[0])
    return got
