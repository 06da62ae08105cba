"""One writer at a time per agent folder.

Installing reads the folder's index, writes skill folders, swaps them into place and writes the
index back. Two processes doing that at once each write back the index they read, and the entries
the other added are lost (a skill whose entry is lost can then vanish without ``check`` saying
``missing``). Every command that changes a folder (install, uninstall, sync) holds this lock for
the whole of its read-modify-write: an exclusive ``flock`` on a hidden file in the folder, so it
is released by the kernel when the process ends, however it ends, and nothing is left to clean up.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chimera_cards.errors import ChimeraError

__all__ = ["LOCK_NAME", "FolderLockError", "folder_lock"]

LOCK_NAME = ".chimera-install.lock"
DEFAULT_WAIT = 120.0


class FolderLockError(ChimeraError):
    """The agent folder's lock could not be taken: another process held it too long, or the lock
    file cannot be opened (a symlink, a folder, no permission). Nothing was written."""


@contextmanager
def folder_lock(
    directory: str | os.PathLike, *, create: bool = True, wait: float = DEFAULT_WAIT
) -> Iterator[Path | None]:
    """Hold the exclusive lock of ``directory`` for the body of the ``with``.

    Args:
        directory: the skills folder.
        create: create the folder (and its parents) when missing; False: a missing folder is
            not locked (there is nothing in it to protect) and the body runs as it is.
        wait: seconds to wait for another process to finish before giving up.
    Yields:
        The lock file's path (None when the folder is missing and ``create`` is false).
    Raises:
        FolderLockError: the lock could not be taken within ``wait`` or cannot be opened.
    """
    folder = Path(directory)
    if create:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FolderLockError(f"cannot create {folder}: {exc.strerror or exc}") from None
    elif not folder.is_dir():
        yield None
        return
    path = folder / LOCK_NAME
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        what = "is a symlink" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise FolderLockError(f"cannot lock {folder}: {path.name} {what}") from None
    try:
        _acquire(fd, folder, wait)
        yield path
    finally:
        os.close(fd)  # closing the only descriptor releases the lock


def _acquire(fd: int, folder: Path, wait: float) -> None:
    deadline = time.monotonic() + wait
    pause = 0.002
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise FolderLockError(f"cannot lock {folder}: {exc.strerror or exc}") from None
        if time.monotonic() >= deadline:
            raise FolderLockError(
                f"{folder}: another chimera-cards process has been writing it for over "
                f"{wait:g} s; nothing was written (try again)"
            )
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
