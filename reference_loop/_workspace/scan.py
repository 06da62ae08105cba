"""Passes over the workspace's directories: the full scan a snapshot records, and the cheap
later looks that list only directories whose ctime moved.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable

from reference_loop._workspace import records
from reference_loop._workspace.gitio import _converting_attributes
from reference_loop._workspace.privategit import PrivateGit
from reference_loop._workspace.records import _moved, _Scan, _Snapshot


class TreeScan(PrivateGit):
    """Passes over the workspace's directories."""

    def _tree_converts(self, scan: _Scan) -> bool:
        """Whether a ``.gitattributes`` in the tree sets an attribute that converts."""
        root = os.fsencode(self.root) + b"/"
        return any(
            _converting_attributes(root + prefix + b".gitattributes")
            for prefix, names in scan.files or ()
            if b".gitattributes" in names
        )

    def _new_files(self, snap: _Snapshot) -> set[bytes]:
        """Files and symlinks the snapshot did not have: in directories whose ctime moved
        (where a new one may be), and everything in directories the snapshot did not have."""
        root = os.fsencode(self.root)
        known = snap.files
        found: set[bytes] = set()
        todo: list[bytes] = []
        for d, (ino, ctime, seen) in snap.dirs.items():
            path = os.fsencode(d)
            try:
                st = os.lstat(root + b"/" + path if path else root)
            except (FileNotFoundError, NotADirectoryError):
                continue  # its files are gone: the add drops them
            if stat.S_ISDIR(st.st_mode) and _moved(st, ino, ctime, seen):
                todo.append(path)
        while todo:
            here = todo.pop()
            prefix = here + b"/" if here else b""
            try:
                it = os.scandir(root + b"/" + here if here else root)
            except (FileNotFoundError, NotADirectoryError):
                continue
            with it:
                for entry in it:
                    name = entry.name
                    if name == b".git":
                        continue  # never staged; restore removes one the attempt made
                    if entry.is_dir(follow_symlinks=False):
                        if os.fsdecode(prefix + name) not in snap.dirs:
                            todo.append(prefix + name)
                    elif (entry.is_file(follow_symlinks=False) or entry.is_symlink()) and (
                        prefix + name not in known
                    ):
                        found.add(prefix + name)
        return found

    def _scan_dirs(self, *, files: bool = False) -> _Scan:
        """One pass over the directories: every directory (-> inode, ctime, when read), those
        with no file anywhere below (git does not record them), every ``.git`` entry, and
        with ``files`` every file and symlink."""
        now = time.time_ns()
        root = os.fsencode(self.root)
        dirs: dict[str, tuple[int, int, int]] = {}
        has_file: dict[str, bool] = {}
        gits: set[str] = set()
        st = os.lstat(root)
        dirs[""] = (st.st_ino, st.st_ctime_ns, now)
        order = [""]
        todo = [b""]
        listed: list[tuple[bytes, list[bytes]]] | None = [] if files else None
        # Bytes names, and only directories get a path built: the loop runs once per file.
        while todo:
            d = todo.pop()
            found = False
            prefix = d + b"/" if d else b""
            names: list[bytes] = []
            if listed is not None:
                listed.append((prefix, names))
            with os.scandir(root + b"/" + d if d else root) as it:
                for entry in it:
                    name = entry.name
                    if name == b".git":
                        gits.add(os.fsdecode(prefix + name))
                    elif entry.is_dir(follow_symlinks=False):
                        rel = prefix + name
                        est = entry.stat(follow_symlinks=False)
                        key = os.fsdecode(rel)
                        dirs[key] = (est.st_ino, est.st_ctime_ns, now)
                        order.append(key)
                        todo.append(rel)
                    elif listed is not None:
                        if entry.is_file(follow_symlinks=False) or entry.is_symlink():
                            names.append(name)
                            found = True
                    elif not found and (entry.is_file(follow_symlinks=False) or entry.is_symlink()):
                        found = True
            has_file[os.fsdecode(d)] = found
        # Deepest first, so a directory knows whether anything below it holds a file.
        for key in sorted(order, key=lambda p: p.count("/"), reverse=True):
            if key and has_file[key]:
                has_file[key.rpartition("/")[0]] = True
        empty = {d for d in order if d and not has_file[d]}
        return _Scan(dirs, empty, gits, listed)

    def _stat_dirs(self, dirs: Iterable[str]) -> dict[str, tuple[int, int, int]]:
        now = time.time_ns()
        root = str(self.root)
        out = {}
        for d in dirs:
            try:
                st = os.lstat(f"{root}/{d}" if d else root)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                out[d] = (st.st_ino, st.st_ctime_ns, now)
        return out

    def _dir_changes(self, snap: _Snapshot) -> tuple[list[str], list[str], bool]:
        """(directories whose ctime moved, new directories and ``.git`` entries, whether a
        snapshot directory is missing). Only directories whose ctime moved are listed: a new
        entry always changes its parent's ctime."""
        moved: list[str] = []
        new: list[str] = []
        missing = False
        # Strings, not pathlib: this runs over every directory of the snapshot on every look
        # and restore, and after a rewrite (a formatter, a checkout) lists each of them.
        root = str(self.root)
        dirs, gits = snap.dirs, snap.gits
        born_after = snap.started - records._RACY_NS
        for d, (ino, ctime, seen) in list(dirs.items()):
            full = f"{root}/{d}" if d else root
            try:
                st = os.lstat(full)
            except OSError:
                missing = True
                continue
            if not _moved(st, ino, ctime, seen):
                continue
            moved.append(d)
            if not stat.S_ISDIR(st.st_mode):
                missing = True
                continue
            base = f"{d}/" if d else ""
            with os.scandir(full) as it:
                for entry in it:
                    name = entry.name
                    if name == ".git":
                        if base + name not in gits:
                            new.append(base + name)  # a repository the attempt made
                    # git saw every directory holding files; one it did not see either is new
                    # or holds only what git skips (FIFOs, sockets): keep the latter.
                    elif (
                        entry.is_dir(follow_symlinks=False)
                        and base + name not in dirs
                        and entry.stat(follow_symlinks=False).st_ctime_ns >= born_after
                    ):
                        new.append(base + name)
        return moved, new, missing
