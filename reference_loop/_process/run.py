"""Run a command so that nothing it starts can outlive it.

Both the verifier and the ``cmd:`` attempter run other people's programs (a test suite, a coding
agent) that may fork servers, hang, or detach with ``setsid``; one place decides how such a run
is bounded and killed. A process group alone is not enough (``setsid`` leaves it), so while a
command runs this process is a *child subreaper* (Linux ``PR_SET_CHILD_SUBREAPER``): whatever
the command orphans is reparented here instead of to init, and is killed with the rest of its
tree when the command ends, times out or is interrupted.

That sweep finds what it kills by walking the process tree from here, so a helper that
double-forks with a clean environment could slip past it; :func:`run_contained` therefore runs
the command as the first process of its own PID namespace (``contain.py``; bubblewrap's under
``--sandbox``), where the kernel itself kills every descendant when the command ends, or, where
no namespace can be had, under a shepherd process the kernel reparents every orphan to
(``shepherd.py``). Both also say how many processes the command left running.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

from reference_loop._process import contain

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
_KILL_ROUNDS = 20  # a fork bomb gets this many sweeps; each sweep kills what it finds
_MARK_VARIABLE = "REFERENCE_LOOP_PROCESS_TREE"
_SHEPHERD = Path(__file__).with_name("shepherd.py")
_SHEPHERD_GRACE = 2.0
# The subreaper flag belongs to the process, not to a thread: count the threads running a command.
_subreaper_lock = threading.Lock()
_subreaper_state = {"users": 0, "restore": 0}

F = TypeVar("F", bound=Callable[..., Any])


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: unwinds like Ctrl-C, so every ``finally`` (the workspace restore) runs."""


def kill_group(proc: subprocess.Popen, grace: float = 0.0) -> None:
    """Kill ``proc``'s whole process group: SIGTERM first when ``grace`` > 0, then SIGKILL."""
    signals = (signal.SIGTERM, signal.SIGKILL) if grace > 0 else (signal.SIGKILL,)
    for sig in signals:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            # Even when the leader is gone, children may live on in the group: the loop goes on
            # to SIGKILL the group once more.
            proc.wait(timeout=grace or None)
        except subprocess.TimeoutExpired:
            continue


@dataclass(frozen=True)
class Finished:
    """How a contained command ended."""

    code: int | None  # None on a timeout
    timed_out: bool
    # Processes it left running when it ended (all killed); None when that cannot be told.
    left_running: int | None
    containment: str  # "pid-namespace", "sandbox", "shepherd" or "process-tree"


def run_contained(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: int | IO | None,
    stdout: int | IO | None,
    stderr: int | IO | None,
    timeout: float,
    grace: float = 0.0,
    pass_fds: Sequence[int] = (),
    wrap: Callable[[list[str]], list[str]] | None = None,
    started: Callable[[], None] | None = None,
) -> Finished:
    """Run ``argv`` so that no process it starts outlives it, and say how many tried to.

    The command runs as the first process of its own PID namespace (``contain.py``): when it
    ends the kernel kills everything it left, whatever that did to detach (``setsid``, double
    fork, a clean environment). ``wrap`` (a sandbox's ``wrap``) puts it inside bubblewrap, whose
    namespace does the same. Where no namespace can be had, a shepherd process that the kernel
    makes the parent of every orphan of the command does the killing (``shepherd.py``). The
    process-group and subreaper sweep stays underneath all three.

    Args:
        argv: the command.
        cwd, env, stdin, stdout, stderr: as for ``subprocess.Popen``.
        timeout: seconds before the whole tree is killed.
        grace: seconds between SIGTERM and SIGKILL on a timeout.
        pass_fds: descriptors the command inherits (a report descriptor).
        wrap: turns the counted command into the argv to start (e.g. ``Sandbox.wrap``).
        started: called once the command has started (close the caller's copies of fds).

    Returns:
        Finished: exit code, timed out, processes left running, and which containment held.

    Raises:
        OSError: the command cannot start.
    """
    command = list(argv)
    counted = contain.contained_argv(command, in_pid_namespace=wrap is not None)
    if counted is not None:
        final = wrap(counted.argv) if wrap is not None else counted.argv
        read_fd, write_fd = counted.read_fd, counted.write_fd
        containment = "sandbox" if wrap is not None else "pid-namespace"
    elif _SHEPHERD.is_file():
        read_fd, write_fd = os.pipe()
        final = [sys.executable, "-I", "-S", str(_SHEPHERD), str(write_fd), *command]
        containment = "shepherd"
        grace = grace or _SHEPHERD_GRACE  # its SIGTERM handler is what ends the tree
    else:  # pragma: no cover - the module ships with the package
        read_fd = write_fd = -1
        final = command
        containment = "process-tree"
    fds = (*pass_fds, write_fd) if write_fd >= 0 else tuple(pass_fds)

    def close_ours() -> None:
        nonlocal write_fd
        if write_fd >= 0:
            os.close(write_fd)
            write_fd = -1
        if started is not None:
            started()

    try:
        code, timed_out = _run_group(
            final,
            cwd=cwd,
            env=env,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            timeout=timeout,
            grace=grace,
            pass_fds=fds,
            started=close_ours,
            namespaced=containment in ("pid-namespace", "sandbox"),
        )
    finally:
        close_ours()
        left = contain.read_survivors(read_fd) if read_fd >= 0 else None
    if code is not None and containment != "shepherd" and code > 128 and left is not None:
        code = -(code - 128)  # the counting shell reports a signal as 128+N
    return Finished(code, timed_out, left, containment)


def _run_group(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: int | IO | None,
    stdout: int | IO | None,
    stderr: int | IO | None,
    timeout: float,
    grace: float,
    pass_fds: Sequence[int],
    started: Callable[[], None],
    namespaced: bool = False,
) -> tuple[int | None, bool]:
    # Every process the command starts inherits this mark; an orphan reparented to us is only
    # killed when it carries the mark, so a child another thread started is never touched.
    mark = secrets.token_hex(8)
    env = {**env, _MARK_VARIABLE: mark}
    # In a PID namespace the kernel ends what the command left, so nothing needs to come back
    # to us: no subreaper (bubblewrap's own init would otherwise end up our zombie) and no scan
    # of /proc after a normal exit; the sweep runs only when the command is cut short.
    with contextlib.nullcontext() if namespaced else _subreaper():
        before = set() if namespaced else _children(os.getpid())
        proc: subprocess.Popen | None = None
        try:
            # Started inside the try: an interrupt that lands while Popen returns still finds
            # the new child (a marked child of ours) and kills it.
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=env,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
                pass_fds=tuple(pass_fds),
            )
            started()
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            assert proc is not None
            _kill_everything(proc, before, mark, grace)
            return None, True
        except BaseException:
            _kill_everything(proc, before, mark, grace)
            raise
        # Children left in the background (a server a test forgot) would keep the workspace busy.
        if not namespaced:
            _kill_everything(proc, before, mark, 0.0)
        return code, False


def _kill_everything(
    proc: subprocess.Popen | None, before: set[int], mark: str, grace: float
) -> None:
    """Kill ``proc``'s group, then every descendant of ``proc`` and every marked process
    reparented to us since ``before`` (with their descendants), sweeping until none is left;
    reap the ones that became ours."""
    if proc is not None:
        kill_group(proc, grace)
    me = os.getpid()
    killed: set[int] = set()
    marked: set[int] = set()
    quiet = 0
    for _round in range(_KILL_ROUNDS):
        table = _process_table()
        roots = set()
        if proc is not None and proc.returncode is None and table.get(proc.pid) == me:
            roots.add(proc.pid)
        for pid, ppid in table.items():
            if ppid == me and pid not in before and pid not in marked and _has_mark(pid, mark):
                marked.add(pid)
        roots |= {pid for pid in marked if pid in table}
        alive = _descendants(roots, table) - killed
        if not alive:
            # A fork that was under way during the last look shows up in the next one.
            quiet += 1
            if quiet == 2 or not killed:
                break
            time.sleep(0.02)
            continue
        quiet = 0
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed |= alive
    if proc is not None:
        proc.wait()
        killed.discard(proc.pid)
        # Killed with the group, a member the command's first process had forked (the PID
        # namespace's init) is reparented to us as it dies: reap it too.
        killed |= _group_members(proc.pid, me)
    _reap(killed, me)


def _reap(pids: set[int], me: int) -> None:
    """Reap the killed orphans that were reparented to us, so no zombie is left behind. A dead
    grandchild may still be on its way to us while its own parent exits: wait a little."""
    deadline = time.monotonic() + 2.0
    pending = set(pids)
    while pending and time.monotonic() < deadline:
        for pid in list(pending):
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    pending.discard(pid)
            except ChildProcessError:
                parent = _process_table_entry(pid)
                if parent is None:
                    pending.discard(pid)  # gone: reaped by its own parent
                elif parent != me:
                    continue  # still being reparented
                else:
                    pending.discard(pid)
        if pending:
            time.sleep(0.01)


def _process_table_entry(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself hold spaces or parentheses.
    fields = data[data.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else None


def _group_members(group: int, me: int) -> set[int]:
    """Our children in process group ``group`` (only the command's own group: another
    thread's children are never reaped here)."""
    found = set()
    for pid, ppid in _process_table().items():
        if ppid != me:
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == group:
            found.add(pid)
    return found


def _has_mark(pid: int, mark: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return f"{_MARK_VARIABLE}={mark}".encode() in fh.read().split(b"\0")
    except OSError:
        return False


def _process_table() -> dict[int, int]:
    """pid -> parent pid for every process we can see in /proc."""
    table: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        parent = _process_table_entry(int(name))
        if parent is not None:
            table[int(name)] = parent
    return table


def _children(pid: int) -> set[int]:
    return {p for p, parent in _process_table().items() if parent == pid}


def _descendants(roots: set[int], table: dict[int, int]) -> set[int]:
    kids: dict[int, list[int]] = {}
    for pid, ppid in table.items():
        kids.setdefault(ppid, []).append(pid)
    found = set(roots)
    todo = list(roots)
    while todo:
        for child in kids.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


@contextlib.contextmanager
def _subreaper() -> Iterator[None]:
    """Make this process a child subreaper while any thread runs a command; the first one in
    turns the flag on (unless it already was), the last one out puts it back."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        yield  # not Linux: the process group is all there is
        return
    with _subreaper_lock:
        _subreaper_state["users"] += 1
        if _subreaper_state["users"] == 1:
            old = ctypes.c_int(0)
            prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(old), 0, 0, 0)
            _subreaper_state["restore"] = int(not old.value)
            if not old.value:
                prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        yield
    finally:
        with _subreaper_lock:
            _subreaper_state["users"] -= 1
            if _subreaper_state["users"] == 0 and _subreaper_state["restore"]:
                prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` (a KeyboardInterrupt) once, so a run
    being stopped unwinds through its ``finally`` blocks exactly as Ctrl-C does; a second
    SIGTERM during that unwinding is ignored rather than cutting a restore short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised = False

    def handler(signum: int, frame: object) -> None:
        nonlocal raised
        if not raised:
            raised = True
            raise Terminated("terminated by SIGTERM")

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def exits_cleanly_on_sigterm(fn: F) -> F:
    """Decorate a CLI command: SIGTERM unwinds it (restoring what its ``finally`` blocks
    restore), then the process exits 143 with one ``error:`` line instead of a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with sigterm_as_interrupt():
                return fn(*args, **kwargs)
        except Terminated:
            sys.stderr.write("error: terminated by SIGTERM\n")
            sys.exit(128 + signal.SIGTERM)

    return wrapper  # type: ignore[return-value]
