"""Contain a command in its own PID namespace, so nothing it starts outlives it, and count what
tried to.

A process group and the subreaper sweep find the processes a command left by walking the tree
from the loop; a helper that double-forks, calls ``setsid`` and drops every environment variable
is still a process the *kernel* knows belongs to the command when the command is the first
process of a PID namespace: when that process exits, the kernel kills every other process in the
namespace, however it detached. So a contained command runs as

    [unshare --user --pid --fork --mount-proc ... | bwrap ... --unshare-pid] bash -c COUNT ...

where ``COUNT`` runs the command, then (with shell built-ins only, so it starts nothing that
would count) counts the processes still alive in the namespace and writes that number to a pipe
only the loop holds, before it exits and the kernel ends them. The number is how a caller knows
that an attempt left processes behind (they are dead either way).

Where user namespaces are not allowed and no sandbox is used, :func:`namespace_prefix` returns
None and the caller falls back to the subreaper sweep (``process.run``).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

# Runs "$@" with the count pipe closed (so the command cannot forge the count), then counts the
# live, non-zombie processes of the namespace other than itself and the namespace's init. Helpers
# an agent ends by themselves as it exits get up to a second (the system's `sleep`, which ends
# before the recount); what still runs then was left. Either way nothing outlives the wrapper,
# and the diff is taken after it. bash: the pipe's descriptor may be any number, and POSIX sh
# redirects only 0-9.
COUNT_SCRIPT = r"""
fd=$1; shift
"$@" {fd}>&-
s=$?
count() {
  n=0
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$p" = "$$" ] && continue
    [ "$p" = 1 ] && continue
    line=
    { read -r line < "/proc/$p/stat"; } 2>/dev/null || continue
    st=${line##*) }
    st=${st%% *}
    [ "$st" = Z ] && continue
    n=$((n+1))
  done
}
count
z=
for c in /usr/bin/sleep /bin/sleep; do [ -x "$c" ] && z=$c && break; done
t=0
while [ "$n" -gt 0 ] && [ "$t" -lt 20 ] && [ -n "$z" ]; do
  "$z" 0.05 {fd}>&-
  t=$((t+1))
  count
done
echo "$n" >&"$fd"
exit $s
"""

_UNSHARE_ARGS = (
    "--user",
    "--map-current-user",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
)


@dataclass(frozen=True)
class Contained:
    """A command wrapped for containment: the argv to start and the pipe its count comes on."""

    argv: list[str]
    read_fd: int  # the loop's end: read it after the command ended
    write_fd: int  # pass to the child (pass_fds), close in the loop once started


@functools.cache
def _bash() -> str | None:
    return shutil.which("bash")


@functools.cache
def namespace_prefix() -> tuple[str, ...] | None:
    """The ``unshare`` command that puts a command in a new user + PID namespace with its own
    ``/proc``, or None where that is not allowed here (checked once per process)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    prefix = (unshare, *_UNSHARE_ARGS)
    try:
        probe = subprocess.run(
            [*prefix, "/bin/sh", "-c", "test -r /proc/1/stat"],
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return prefix if probe.returncode == 0 else None


def contained_argv(argv: Sequence[str], *, in_pid_namespace: bool = False) -> Contained | None:
    """``argv`` wrapped so that it runs as the first process of a PID namespace, with the count
    of processes it left written to a pipe.

    Args:
        argv: the command (for a sandboxed command: the part after bwrap's ``--``).
        in_pid_namespace: the caller starts ``argv`` inside a PID namespace already (bwrap's
            ``--unshare-pid``), so only the counting wrapper is added.

    Returns:
        The wrapped command, or None when no namespace can be had here (the caller falls back
        to sweeping the process tree).
    """
    bash = _bash()
    if bash is None:
        return None
    prefix: tuple[str, ...] = ()
    if not in_pid_namespace:
        found = namespace_prefix()
        if found is None:
            return None
        prefix = found
    read_fd, write_fd = os.pipe()
    os.set_inheritable(write_fd, True)
    wrapped = [
        *prefix,
        bash,
        "--noprofile",
        "--norc",
        "-c",
        COUNT_SCRIPT,
        "count",
        str(write_fd),
        *argv,
    ]
    return Contained(wrapped, read_fd, write_fd)


def read_survivors(read_fd: int) -> int | None:
    """The count the wrapper wrote (None when it wrote none: it was killed, or never ran);
    closes ``read_fd``. Call after the command ended and the write end is closed here."""
    chunks = []
    try:
        os.set_blocking(read_fd, False)
        while True:
            try:
                chunk = os.read(read_fd, 64)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
    text = b"".join(chunks).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None
