"""Write a file so that readers see the old content or the new, never half of it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from chimera_cards.errors import ChimeraError


class WriteError(ChimeraError):
    """An output path the user named cannot be written (missing folder, a file in the way, …)."""

    exit_code = 2


def write_atomic(target: Path, data: bytes) -> None:
    """Write ``data`` to a temp file beside ``target``, then rename it over ``target``.

    The temp file is in the same directory so the rename stays on one filesystem; it is removed
    if anything (including Ctrl-C) stops the write.

    Args:
        target: the file to create or replace.
        data: its new bytes.

    A ``target`` under ``/dev`` or ``/proc`` (``/dev/stdout``, ``/dev/fd/3``) or that is a
    character device or a named pipe is appended to instead: there is nothing to replace
    atomically, and a rename would put a regular file where the device or link was.

    Raises:
        WriteError: the folder is missing or not writable, ``target`` cannot be replaced, or a
            device or pipe refuses the bytes (``/dev/full``).
    """
    target = Path(target)
    if _is_stream(target):
        # /dev/stdout, a named pipe, /dev/null: appended to, as a shell's `>>` does, never
        # renamed over (a rename would put a regular file where the device, pipe or link was).
        try:
            with open(target, "ab") as handle:
                handle.write(data)
        except OSError as exc:
            raise WriteError(f"cannot write {target}: {exc.strerror or exc}") from None
        return
    try:
        fd, tmp = _create_beside(target)
    except OSError as exc:
        raise WriteError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise WriteError(f"cannot write {target}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _is_stream(target: Path) -> bool:
    if os.path.abspath(target).startswith(("/dev/", "/proc/")):
        return True
    try:
        mode = os.stat(target).st_mode  # through links: /dev/stdout is one
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


# As tempfile.mkstemp opens its file; importing tempfile would load shutil, random and the
# compression modules, a few milliseconds of every writing command's start-up.
_CREATE_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _create_beside(target: Path) -> tuple[int, str]:
    """A new file ``.NAME.<random>`` beside ``target``, readable and writable by its owner only."""
    for _ in range(100):
        tmp = os.path.join(target.parent, f".{target.name}.{os.urandom(6).hex()}")
        try:
            return os.open(tmp, _CREATE_FLAGS, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")
