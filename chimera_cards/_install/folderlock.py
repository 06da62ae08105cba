"""One writer at a time per agent folder.

Installing reads the folder's index, writes skill folders, swaps them into place and writes the
index back. Two processes doing that at once each write back the index they read, and the entries
the other added are lost (a skill whose entry is lost can then vanish without ``check`` saying
``missing``). Every command that changes a folder (install, uninstall, sync) holds this lock for
the whole of its read-modify-write: an exclusive ``flock`` on the folder itself (its directory
descriptor), so nothing is added to the folder, and the kernel releases it when the process
ends, however it ends: there is nothing to clean up.

The lock is re-entrant within one thread of one process (``install`` holds it and calls
``write_skill``, which takes it too): the folders this context already holds are kept in a
``ContextVar``, which a forked writer inherits, so the child works under its parent's lock.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from chimera_cards.errors import ChimeraError

TYPE_CHECKING = False  # typing is not imported at run time: `check` imports this module
if TYPE_CHECKING:
    from typing import ParamSpec, TypeVar

    P = ParamSpec("P")
    T = TypeVar("T")


DEFAULT_WAIT = 120.0
# The folders (real paths) whose lock this thread of this process holds now.
_HELD: ContextVar[frozenset[str]] = ContextVar("chimera_cards_held_folders", default=frozenset())


class FolderLockError(ChimeraError):
    """The agent folder's lock could not be taken: another process held it too long, or the
    folder cannot be opened (not a folder, no permission). Nothing was written."""


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
        The locked folder (None when it is missing and ``create`` is false).
    Raises:
        FolderLockError: the lock could not be taken within ``wait`` or cannot be opened.
    """
    folder = Path(directory)
    key = os.path.realpath(folder)
    if key in _HELD.get():
        yield folder  # this context holds it already (an outer call took it)
        return
    if create:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FolderLockError(f"cannot create {folder}: {exc.strerror or exc}") from None
    elif not folder.is_dir():
        yield None
        return
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise FolderLockError(f"cannot lock {folder}: {exc.strerror or exc}") from None
    try:
        _acquire(fd, folder, wait)
        token = _HELD.set(_HELD.get() | {key})
        try:
            yield folder
        finally:
            _HELD.reset(token)
    finally:
        os.close(fd)  # closing the only descriptor releases the lock


def serialized(*, create: bool = True) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Run the decorated function holding ``folder_lock`` of its ``directory`` argument.

    Args:
        create: as for ``folder_lock`` (False for removals: a missing folder needs no lock).
    """

    def decorate(fn: Callable[P, T]) -> Callable[P, T]:
        # Its place among the positional parameters (no `inspect`: `check` imports this module).
        at = fn.__code__.co_varnames[: fn.__code__.co_argcount].index("directory")

        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
            directory = kwargs["directory"] if "directory" in kwargs else args[at]
            with folder_lock(directory, create=create):  # type: ignore[arg-type]
                return fn(*args, **kwargs)

        return wrapper

    return decorate


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
