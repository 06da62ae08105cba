"""Remove a private store off the caller's path, and sweep what a killed remover left.

Deleting a workspace's store can cost more than the rest of a run (freeing a 1 GB pack the
kernel has already written back takes ~0.15 s). :func:`discard` renames the store into a fresh
trash directory beside it (a rename is instant and makes the store's path free at once), then
removes the trash in a thread. A process killed before its thread finished leaves the trash
behind; :func:`sweep` removes trash whose name says it belongs to a process of this pid
namespace that is no longer alive, owned by this user.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import threading

# Trash directories are named reference-loop-trash-<pid namespace>-<pid>-<random>: the random
# part comes from mkdtemp, which creates the directory exclusively, so a trash name never
# replaces anything (renaming a directory onto an existing empty one would).
TRASH_PREFIX = "reference-loop-trash-"
_TRASH_NAME = re.compile(r"reference-loop-trash-(\d+)-(\d+)-[A-Za-z0-9_]+\Z")


class Removal:
    """A store being removed in the background; :meth:`wait` blocks until it is gone."""

    def __init__(self, trash: str | None, thread: threading.Thread | None) -> None:
        self.trash = trash
        self._thread = thread

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the removal to finish.

        Args:
            timeout: seconds to wait at most (``None``: until done).

        Returns:
            True when the store is gone.
        """
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                return False
        return self.trash is None or not os.path.lexists(self.trash)


def discard(path: str) -> Removal:
    """Make ``path`` (a directory this process owns) disappear now and remove it in a thread.

    Args:
        path: the directory to remove.

    Returns:
        The background removal (already finished when the rename or the thread was refused,
        in which case the directory was removed here).
    """
    parent = os.path.dirname(path)
    try:
        trash = tempfile.mkdtemp(
            prefix=f"{TRASH_PREFIX}{_pid_namespace()}-{os.getpid()}-", dir=parent
        )
    except OSError:
        shutil.rmtree(path, ignore_errors=True)
        return Removal(None, None)
    try:
        os.rename(path, os.path.join(trash, "store"))
    except OSError:
        shutil.rmtree(path, ignore_errors=True)
    # Not a daemon: a normal exit waits for the removal instead of leaving trash behind.
    thread = threading.Thread(target=shutil.rmtree, args=(trash, True), name="store-removal")
    try:
        thread.start()
    except RuntimeError:  # the interpreter is shutting down: no new threads
        shutil.rmtree(trash, ignore_errors=True)
        return Removal(trash, None)
    return Removal(trash, thread)


def sweep(parent: str) -> list[str]:
    """Remove the trash in ``parent`` that a killed process of this user left behind.

    Only directories named like :func:`discard`'s trash, owned by this user, whose pid
    namespace is this one and whose process is no longer alive are removed: a live remover's
    trash (this process's or another's) is left to it.

    Args:
        parent: the directory the stores live in.

    Returns:
        The trash directories removed.
    """
    here = _pid_namespace()
    uid = os.getuid()
    removed: list[str] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        m = _TRASH_NAME.match(entry.name)
        if m is None or int(m.group(1)) != here:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or _alive(int(m.group(2))):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(entry.path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, another user's
    return True


def _pid_namespace() -> int:
    """The inode of this process's pid namespace (0 where /proc does not say): a pid in a
    trash name only means something to processes that share the namespace."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0
