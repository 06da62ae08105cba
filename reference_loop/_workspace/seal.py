"""The private store's seal: what every file and directory of it was when the workspace last
left it, so that a change made by anything else is found before the store is read again.

The store lives outside the workspace, but a process the attempt started runs as the same user
and can reach it (outside ``--sandbox``, which hides it). git reads trees, the index and the
config from the store without checking them, so a store changed in between could hide a change
from the diff, make restore skip a path, or name a program for git to run. Between two calls of
the workspace nothing of its own writes the store; any entry whose kind, permission bits,
inode, ctime, mtime or size moved (ctime cannot be set back), any entry added or removed,
breaks the seal, and the workspace refuses to go on (``StoreTampered``).
"""

from __future__ import annotations

import hashlib
import os

from reference_loop.errors import LoopError

_Seal = dict[bytes, tuple[int, int, int, int, int]]
_SHARED = b"sharedindex."


class StoreTampered(LoopError):
    """The private store changed while the workspace was not using it."""


def seal(store: str, *, skip: str = "") -> _Seal:
    """(mode, inode, ctime, mtime, size) of every entry under ``store``, the store included;
    ``skip`` names a top-level entry sealed apart (its contents left out)."""
    top = os.fsencode(store)
    skipped = os.fsencode(skip) if skip else None
    st = os.lstat(top)
    out: _Seal = {b"": (st.st_mode, st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_size)}
    todo = [b""]
    while todo:
        rel = todo.pop()
        with os.scandir(top + b"/" + rel if rel else top) as it:
            for entry in it:
                name = rel + b"/" + entry.name if rel else entry.name
                est = entry.stat(follow_symlinks=False)
                if entry.name.startswith(_SHARED):
                    # git touches a split index's shared part whenever it reads it (so that it
                    # is not expired): its times move; its bytes are checked instead (check).
                    out[name] = (est.st_mode, est.st_ino, 0, 0, est.st_size)
                    continue
                out[name] = (est.st_mode, est.st_ino, est.st_ctime_ns, est.st_mtime_ns, est.st_size)
                if entry.is_dir(follow_symlinks=False) and name != skipped:
                    todo.append(name)
    return out


def check(store: str, sealed: _Seal, *, skip: str = "") -> None:
    """Raise :class:`StoreTampered` naming the first entry that differs from ``sealed``."""
    try:
        now = seal(store, skip=skip)
    except OSError as exc:
        raise StoreTampered(
            f"the workspace's private store {store} was changed by something else "
            f"({exc.strerror or exc}); it cannot be trusted to restore from"
        ) from exc
    if now == sealed and all(_shared_intact(store, k) for k in now if _is_shared(k)):
        return
    moved = sorted(
        k
        for k in now.keys() | sealed.keys()
        if now.get(k) != sealed.get(k) or (_is_shared(k) and not _shared_intact(store, k))
    )
    shown = ", ".join(os.fsdecode(k) or "." for k in moved[:3])
    raise StoreTampered(
        f"the workspace's private store {store} was changed by something else ({shown}); "
        "it cannot be trusted to restore from"
    )


def _is_shared(rel: bytes) -> bool:
    return rel.rpartition(b"/")[2].startswith(_SHARED)


def _shared_intact(store: str, rel: bytes) -> bool:
    """Whether a shared index still holds the bytes its name (their SHA-1) says."""
    try:
        with open(os.path.join(os.fsencode(store), rel), "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    name = rel.rpartition(b"/")[2][len(_SHARED) :]
    digest = hashlib.sha1(data[:-20]).digest()
    return len(data) > 20 and digest == data[-20:] and digest.hex().encode() == name
