"""Run a command in its own process group, so nothing it starts can outlive it.

Both the verifier and the ``cmd:`` attempter run other people's programs (a test suite, a coding
agent) that may fork servers or hang; one place decides how such a run is bounded and killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO


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


def run_in_group(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: int | IO | None,
    stdout: int | IO | None,
    stderr: int | IO | None,
    timeout: float,
    grace: float = 0.0,
) -> tuple[int | None, bool]:
    """Run ``argv`` in a new process group and return (exit code, timed out).

    On a timeout, Ctrl-C or any error the whole group is killed (``grace`` seconds after a
    SIGTERM when given); after a normal exit whatever the command left running in its group is
    killed too. Raises OSError when the command cannot start.
    """
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc, grace)
        return None, True
    except BaseException:
        kill_group(proc, grace)
        raise
    # Children left in the background (a server a test forgot) would keep the workspace busy.
    kill_group(proc)
    return code, False
