"""The shepherd: where no PID namespace can be had, a process per command that the kernel makes
the parent of everything the command orphans.

Run as ``python -I -S shepherd.py FD ARGV...``: it marks itself a child subreaper
(``PR_SET_CHILD_SUBREAPER``), starts ARGV in its own session, and waits. Every process the command
starts and leaves behind (double-forked, ``setsid``, with a clean environment) is reparented to
the shepherd by the kernel, not to init or to the loop; when the command ends, the shepherd kills
all of its descendants, writes their number to FD, and exits as the command did. A SIGTERM or
SIGINT (the loop's timeout or Ctrl-C) kills the command's tree first. Standard library only, and
nothing imported from the workspace (``-I``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1


def _children(me: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me and fields[0] != b"Z":
            found.append(int(name))
    return found


def _kill_all(me: int) -> int:
    """SIGKILL every descendant until none is left (each one's orphans come back to us)."""
    killed: set[int] = set()
    quiet = 0
    while quiet < 2:
        kids = _children(me)
        if not kids:
            quiet += 1
            time.sleep(0.01)
        else:
            quiet = 0
        for pid in kids:
            killed.add(pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
    return len(killed)


def main(argv: list[str]) -> int:
    fd = int(argv[0])
    command = argv[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # If the loop dies, so does the shepherd (and its SIGTERM handler ends the tree).
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    me = os.getpid()
    child = os.posix_spawnp(command[0], command, os.environ, setsid=True)
    stopping = []

    def stop(signum: int, _frame: object) -> None:
        stopping.append(signum)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child, signal.SIGKILL)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    left = _kill_all(me)
    with contextlib.suppress(OSError):
        os.write(fd, f"{left}\n".encode())
    if os.WIFSIGNALED(status):
        # End as the command did, so the caller sees the same signal (SIGKILL has no handler).
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(me, sig)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
