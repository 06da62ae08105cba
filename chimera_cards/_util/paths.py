"""Folders the user names, and what lies inside them: never follow a link out of such a folder.

The folder given on the command line is the user's choice, symlinks and all. Below it, every
component is data that someone else may have planted: a card folder that is a symlink to
``~/.ssh`` must neither be read as a card nor written through on export.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path

from chimera_cards._util.atomic import WriteError
from chimera_cards.errors import LinkEscapeError

_NOFOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def check_link_inside(root: Path, child: Path) -> None:
    """Refuse ``child`` (an entry of ``root``) when it is a symlink that leads outside ``root``.

    Args:
        root: the folder the user named.
        child: an entry of it that is about to be read.

    Raises:
        LinkEscapeError: ``child`` is a broken, looping or escaping symlink.
    """
    if not child.is_symlink():
        return
    try:
        target = child.resolve(strict=True)
    except (OSError, RuntimeError):
        raise LinkEscapeError(f"{child}: broken or looping symlink") from None
    if not target.is_relative_to(Path(root).resolve()):
        raise LinkEscapeError(
            f"{child.name} is a symlink to {target}, outside {root}; not followed"
        )


def _open_dirs_inside(root: Path, parts: Sequence[str]) -> int:
    """Make ``root`` (links followed) and ``root/parts…`` (never a link below it); open the last."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise WriteError(f"cannot write {root}: {exc.strerror or exc}") from None
    where = root
    try:
        for part in parts:
            where = where / part
            try:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                info = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except OSError as exc:
                raise WriteError(f"cannot write {where}: {exc.strerror or exc}") from None
            if stat.S_ISLNK(info.st_mode):
                raise LinkEscapeError(f"{where}: is a symlink; refusing to write through it")
            if not stat.S_ISDIR(info.st_mode):
                raise LinkEscapeError(f"{where}: exists and is not a folder")
            try:
                # O_NOFOLLOW again: the entry may have been swapped since the check above.
                child = os.open(part, _NOFOLLOW_DIR, dir_fd=fd)
            except OSError as exc:
                raise LinkEscapeError(
                    f"{where}: cannot open as a folder ({exc.strerror})"
                ) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_atomic_inside(root: Path, parts: Sequence[str], filename: str, data: bytes) -> Path:
    """Write ``root/parts…/filename`` atomically without following a symlink below ``root``.

    Missing folders are created. Every folder is opened relative to its parent with
    ``O_NOFOLLOW``, and the file is written to a temp name and renamed in that same open folder,
    so a symlink planted anywhere below ``root`` is refused instead of written through.

    Args:
        root: the output folder the user named (created if missing).
        parts: folder names below it, e.g. ``[card_name]``.
        filename: the file to create or replace.
        data: its bytes.

    Returns:
        The path written.

    Raises:
        WriteError: ``root`` cannot be created or written.
        LinkEscapeError: a component below ``root``, or ``filename``, is a symlink or not a
            regular folder/file.
    """
    root = Path(root)
    target = root.joinpath(*parts, filename)
    fd = _open_dirs_inside(root, parts)
    try:
        try:
            info = os.stat(filename, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise LinkEscapeError(f"{target}: exists and is not a regular file; not replaced")
        tmp = f".{filename}.{secrets.token_hex(6)}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        done = False
        try:
            with os.fdopen(os.open(tmp, flags, 0o600, dir_fd=fd), "wb") as handle:
                handle.write(data)
            os.replace(tmp, filename, src_dir_fd=fd, dst_dir_fd=fd)
            done = True
        except OSError as exc:
            raise WriteError(f"cannot write {target}: {exc.strerror or exc}") from None
        finally:
            if not done:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=fd)
    finally:
        os.close(fd)
    return target
