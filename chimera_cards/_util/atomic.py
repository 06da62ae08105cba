"""Write a file so that readers see the old content or the new, never half of it."""

from __future__ import annotations

import os
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

    Raises:
        WriteError: the folder is missing or not writable, or ``target`` cannot be replaced.
    """
    target = Path(target)
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
