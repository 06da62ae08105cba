"""An ordered parallel map over worker processes, for pure CPU-bound steps (parse and lint).

``parallel_map(fn, chunks)`` yields ``fn(chunk)`` for every chunk, in order, computed by a pool of
forked worker processes that lives only as long as the iteration: leaving it (finished, an error,
Ctrl-C) cancels what is queued and ends the workers. ``fn`` must be a module-level function whose
argument and result pickle; chunks of many items amortise that. Where forking is not available
(not Linux, a daemonic process) or only one CPU is usable, the map runs in this process, with the
same results in the same order.

Workers ignore SIGINT, so Ctrl-C reaches only this process (which stops the pool) and no worker
prints a traceback. A worker that dies (killed, out of memory) raises ``WorkerError``: the caller
has not written anything it has not received, so whatever it keeps in one transaction is whole.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from chimera_cards.errors import ChimeraError

T = TypeVar("T")
R = TypeVar("R")

# Chunks handed to the pool ahead of the one being read: enough that no worker waits for the
# next, few enough that a cancelled map leaves little work behind.
_AHEAD_PER_WORKER = 4


class WorkerError(ChimeraError):
    """A worker process died before returning its result; nothing after it was used."""


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _can_fork() -> bool:
    if sys.platform != "linux":
        return False  # fork without exec is unsafe on macOS; spawn would re-import everything
    import multiprocessing

    return not multiprocessing.current_process().daemon  # daemons may not have children


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def parallel_map(
    fn: Callable[[T], R], chunks: Iterable[T], *, workers: int | None = None
) -> Iterator[R]:
    """``map(fn, chunks)``, spread over worker processes; results in the order of ``chunks``.

    Args:
        fn: a module-level function of one picklable argument, returning a picklable value.
        chunks: the arguments, read lazily (one chunk is normally many items).
        workers: worker processes; None for one per usable CPU. 1 (or no fork) maps in-process.
    Returns:
        An iterator of results; closing it early stops the pool.
    Raises:
        WorkerError: a worker process died.
        Whatever ``fn`` raised, for the first chunk that raised.
    """
    count = usable_cpus() if workers is None else workers
    if count <= 1 or not _can_fork():
        return map(fn, chunks)
    return _pooled(fn, iter(chunks), count)


def _pooled(fn: Callable[[T], R], chunks: Iterator[T], count: int) -> Iterator[R]:
    import multiprocessing
    from collections import deque
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(
        count, mp_context=multiprocessing.get_context("fork"), initializer=_ignore_sigint
    )
    pending: deque[Future[R]] = deque()
    try:
        for chunk in chunks:
            pending.append(pool.submit(fn, chunk))
            if len(pending) >= count * _AHEAD_PER_WORKER:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BrokenProcessPool as exc:
        raise WorkerError(f"a worker process died ({exc})") from None
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
