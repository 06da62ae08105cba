"""Code from outside the workspace: what the verifier ran that the patch does not show.

An attempt is not confined to the workspace: it can write a module into a folder on the
verifier's import path (site-packages, a ``PYTHONPATH`` folder, one it appends to
``sys.path`` itself), a ``.pth`` or ``sitecustomize`` there, or rewrite an installed module in
place. None of it is in the diff, the patch review never reads it, and under ``--sandbox`` it is
still visible (read-only). The report plugin lists, at the end of the run, every module file
the process loaded and every folder on its ``sys.path``; the loop then looks from outside, with
``stat``: a loaded module file outside the workspace whose inode changed after the loop
started and before this verifier run began (its ``ctime``, which no program can set back), or
such an entry at the top of an import folder that Python could run (a module, a package
folder, a ``.pth``, an extension module, ``sitecustomize``), is an ``outside-code`` violation.
What changed while the verifier ran is the run's own doing (a test that writes a module to a
temporary folder and imports it), and code in the workspace that writes source is the patch
review's to mark. Compiled caches (``__pycache__``) are the interpreter's own writes.

Something else that changes those folders while the loop runs (a package installed meanwhile)
is refused the same way: the verdict cannot tell who wrote it.
"""

from __future__ import annotations

import os
import stat as statmod
from collections.abc import Iterable
from pathlib import Path

from reference_loop._verdict.integrity import Violation

_OWN_WRITES = frozenset({"__pycache__"})
# What in an import folder Python can run: a module or package by its name, a .pth line, an
# extension module (a folder named otherwise, a cache, a log is nothing it imports).
_CODE_SUFFIXES = (".py", ".pyc", ".pyw", ".pth", ".so", ".pyd", ".zip", ".egg")


def _importable(entry: os.DirEntry[str]) -> bool:
    name = entry.name
    if name in _OWN_WRITES:
        return False
    try:
        folder = entry.is_dir(follow_symlinks=False)
    except OSError:
        return False
    if folder:
        return name.isidentifier()
    return name.endswith(_CODE_SUFFIXES)


_MAX_NAMED = 5


def _outside(path: str, roots: tuple[str, ...], under: tuple[str, ...]) -> bool:
    return path not in roots and not path.startswith(under)


def _resolved(path: str, folders_real: dict[str, str]) -> tuple[str, int]:
    """The real path of a module file and its ``ctime``. A run loads hundreds of files from a
    few dozen folders: each folder is resolved once (``realpath`` costs a system call per path
    component), the file itself with one ``lstat``, and followed only where it is a link.

    Raises:
        OSError: the file cannot be stat'ed (gone since the run).
    """
    head, _, name = path.rpartition(os.sep)
    if name in ("", os.curdir, os.pardir):
        real = os.path.realpath(path)
        return real, os.stat(real).st_ctime_ns
    folder = folders_real.get(head)
    if folder is None:
        # "" is the current folder, a path without a separator; "/" the root, "/x" under it.
        resolved = os.path.realpath(head or (os.sep if path.startswith(os.sep) else os.curdir))
        folder = folders_real[head] = resolved.rstrip(os.sep)
    real = folder + os.sep + name
    found = os.lstat(real)
    if statmod.S_ISLNK(found.st_mode):
        real = os.path.realpath(real)
        found = os.stat(real)
    return real, found.st_ctime_ns


def outside_changes(
    files: Iterable[str],
    folders: Iterable[str],
    *,
    since_ns: int,
    until_ns: int,
    inside: Iterable[Path],
) -> list[Violation]:
    """The module files and import-folder entries outside ``inside`` changed between
    ``since_ns`` (``time.time_ns()`` before the loop's first verifier run) and ``until_ns``
    (before this verifier run started).

    Args:
        files: the module files the verifier's process loaded (absolute paths).
        folders: the folders on its ``sys.path``.
        since_ns: when the loop started.
        until_ns: when this verifier run started.
        inside: the workspace and the loop's own private folders (never reported).

    Returns:
        One ``outside-code`` violation per changed file or folder entry (a few named, the rest
        counted in the last one's reason).
    """
    roots = tuple(os.path.realpath(p) for p in inside)
    under = tuple(r + os.sep for r in roots)
    changed: list[tuple[str, str]] = []
    seen: set[str] = set()
    folders_real: dict[str, str] = {}
    for path in files:
        try:
            real, ctime = _resolved(path, folders_real)
        except OSError:
            continue
        if real in seen or not _outside(real, roots, under):
            continue
        seen.add(real)
        if since_ns <= ctime < until_ns:
            changed.append((real, "a module the verifier loaded, changed during the run"))
    for folder in folders:
        real = os.path.realpath(folder or os.curdir)
        if real in seen or not _outside(real, roots, under) or not os.path.isdir(real):
            continue
        seen.add(real)
        try:
            # A folder whose own inode is older than the run had no entry added, removed or
            # renamed since: only a .pth rewritten in place (no module to be loaded) can differ.
            whole = os.stat(real).st_ctime_ns >= since_ns
            entries = list(os.scandir(real))
        except OSError:
            continue
        for entry in entries:
            if not (entry.name.endswith(".pth") or (whole and _importable(entry))):
                continue
            try:
                ctime = entry.stat(follow_symlinks=False).st_ctime_ns
            except OSError:
                continue
            if since_ns <= ctime < until_ns and entry.path not in seen:
                seen.add(entry.path)
                changed.append(
                    (entry.path, "new or changed in a folder on the verifier's import path")
                )
    found = [Violation("outside-code", path, why) for path, why in changed[:_MAX_NAMED]]
    if len(changed) > _MAX_NAMED:
        found.append(
            Violation("outside-code", "", f"{len(changed) - _MAX_NAMED} more changed the same way")
        )
    return found
