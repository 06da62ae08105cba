"""The bench's cells as Ray tasks: a cluster runs the grid, each cell the same ``run_one``.

Each cell (task x arm x seed) is one Ray task. The task folder travels with it as a tar archive
(a worker on another machine has none of the driver's files), is unpacked into a temporary
folder on the worker, loaded, and run by ``runner.run_one``, exactly as the local executor runs
it; the outcome comes back as a dict. Each cell declares ``num_cpus`` and one unit of the custom
resource ``agent_sessions`` (when a cap is given), so a cluster never runs more agent sessions at
once than the cap. A cell whose worker died is retried (``max_retries``); a cell that raised is
not (``retry_exceptions=False``): a failed attempt is an outcome, not an accident. Each outcome
comes back with where it ran (host name and Ray node id) for the progress line.

On a stop (Ctrl-C, SIGTERM) the cells in flight are cancelled the gentle way first (Ray raises
KeyboardInterrupt in the cell, which kills the cell's agent and verifier and removes its
workspace, as a local stop does), and killed with their worker after ``STOP_GRACE`` seconds.

Needs the ``ray`` extra (``pip install 'chimera-cards[ray]'``) on the driver and every worker.
"""

from __future__ import annotations

import functools
import io
import logging
import socket
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reference_loop._bench.runner import (
    ARMS,
    Arm,
    AttempterSettings,
    RunOutcome,
    run_one,
)
from reference_loop._tasks.task import Task, load_task_dir
from reference_loop.errors import LoopError, LoopUsageError

SESSIONS = "agent_sessions"  # the custom resource that caps concurrent agent sessions
MAX_RETRIES = 3  # times a cell whose worker died is run again
STOP_GRACE = 3.0  # seconds cancelled cells get to unwind before their workers are killed
REACH_TIMEOUT = 10.0  # seconds to wait for --address to accept a connection
POLL = 0.25  # seconds between looks at the stop event while cells run


@dataclass(frozen=True)
class RayOptions:
    """Where and how the cells run on Ray."""

    address: str | None = None  # None: start a local Ray instance for this bench
    cpus_per_cell: float = 1.0
    sessions: int | None = None  # cap on concurrent agent sessions (None: no cap)
    max_retries: int = MAX_RETRIES


def pack_task(task: Task) -> bytes:
    """The task folder as a gzipped tar archive (caches and bytecode left out)."""
    if task.root is None:
        raise LoopUsageError(f"task {task.name!r} has no folder to ship to a Ray worker")
    buf = io.BytesIO()
    skip = {"__pycache__", ".pytest_cache"}
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(
            task.root,
            arcname=task.name,
            filter=lambda info: None if skip & set(Path(info.name).parts) else info,
        )
    return buf.getvalue()


def run_packed_cell(
    packed: bytes, name: str, arm: str, seed: int, kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The cell function a Ray worker runs: unpack the task, ``run_one``, the outcome as a dict
    with where it ran."""
    import ray

    with tempfile.TemporaryDirectory(prefix="reference-loop-ray-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
            tar.extractall(tmp, filter="data")
        task = load_task_dir(Path(tmp) / name)
        outcome = run_one(task, ARMS[arm], seed, **kwargs)
    node = ray.get_runtime_context().get_node_id()
    return {"run": outcome.to_dict(), "where": f"{socket.gethostname()} node {node[:8]}"}


def ray_executor(options: RayOptions, **run: Any) -> Callable[..., None]:
    """An executor for ``run_bench(executor=...)``: ``run`` holds ``run_cells_on_ray``'s
    keyword arguments (attempter, escalate_to, max_attempts, settings, ignore, budgets)."""
    return functools.partial(run_cells_on_ray, options=options, **run)


def run_cells_on_ray(
    cells: Sequence[tuple[Task, Arm, int]],
    done: Callable[[RunOutcome, str], None],
    stop: threading.Event,
    *,
    options: RayOptions,
    attempter: str,
    escalate_to: str | None,
    max_attempts: int,
    settings: AttempterSettings,
    ignore: Sequence[str],
    budgets: dict[str, int],
) -> None:
    """Run ``cells`` as Ray tasks; ``done(outcome, where)`` is called as each finishes. Returns
    once every cell has finished, or soon after ``stop`` is set (the cells in flight stopped)."""
    try:
        import ray
    except ImportError:
        raise LoopUsageError("--executor ray needs Ray: pip install 'chimera-cards[ray]'") from None
    pending: dict[Any, tuple[str, str, int]] = {}
    if options.address:
        _check_reachable(options.address)
    started_here = not ray.is_initialized()
    if started_here:
        # Ray's own notes (connecting, no SIGTERM handler off the main thread) would mix with
        # the progress lines; its errors still show.
        init: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.ERROR,
        }
        if options.address:
            init["address"] = options.address
        elif options.sessions is not None:
            init["resources"] = {SESSIONS: options.sessions}
        try:
            ray.init(**init)
        except Exception as exc:  # Ray raises plain Exception, ConnectionError, ValueError
            where = options.address or "a local instance"
            raise LoopError(f"cannot start Ray ({where}): {exc}") from None
    try:
        resources = {SESSIONS: 1.0} if options.sessions is not None else {}
        remote = ray.remote(run_packed_cell).options(
            num_cpus=options.cpus_per_cell,
            resources=resources,
            max_retries=options.max_retries,
            retry_exceptions=False,
        )
        packed = {task.name: ray.put(pack_task(task)) for task, _, _ in cells}
        for task, arm, seed in cells:
            kwargs = {
                "attempter": attempter,
                "escalate_to": escalate_to,
                "max_attempts": max_attempts,
                "settings": settings,
                "ignore": tuple(ignore),
                "budget": budgets[task.name],
            }
            ref = remote.remote(packed[task.name], task.name, arm.name, seed, kwargs)
            pending[ref] = (task.name, arm.name, seed)
        while pending:
            if stop.is_set():
                _cancel(ray, list(pending))
                return
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=POLL)
            for ref in ready:
                cell = pending.pop(ref)
                try:
                    got = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    raise LoopError(
                        f"{cell[1]} {cell[0]} seed {cell[2]} failed on Ray: {exc}"
                    ) from None
                done(RunOutcome(**got["run"]), got["where"])
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    finally:
        if started_here:
            ray.shutdown()


def _check_reachable(address: str) -> None:
    """Refuse a ``HOST:PORT`` no Ray head listens on at once (Ray itself retries for minutes,
    printing a warning every five seconds). Other forms (``auto``, ``ray://``) go to Ray."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "/" in host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT).close()
    except OSError as exc:
        raise LoopError(f"cannot reach a Ray head at {address}: {exc.strerror or exc}") from None


def _cancel(ray: Any, refs: list[Any]) -> None:
    """Cancel ``refs``: KeyboardInterrupt in each running cell (it kills its children and
    removes its workspace), then after ``STOP_GRACE`` the workers of those still running."""
    for ref in refs:
        ray.cancel(ref, force=False)
    deadline = time.monotonic() + STOP_GRACE
    left = refs
    while left and time.monotonic() < deadline:
        _, left = ray.wait(left, num_returns=len(left), timeout=POLL)
    for ref in left:
        ray.cancel(ref, force=True)
