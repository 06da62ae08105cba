"""The git engine: every change staged through git's own ``add`` / ``update-index`` into the
private index, and the first snapshot of a repository's top through ``git add``.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterable

from reference_loop._workspace.gitio import (
    _EMBEDDED_WARNING,
    _EMPTY_BLOB,
    _GITLINK,
    _NESTED_FAILED,
    _PLACEHOLDER,
    _ZERO_SHA,
    _git_error,
    _InThread,
    _split_z,
)
from reference_loop._workspace.records import _Entry, _Scan, _Snapshot
from reference_loop._workspace.scan import TreeScan
from reference_loop.errors import LoopError

_UNADDABLE = "can only add regular files, symbolic links or git-directories"


class GitStaging(TreeScan):
    """Staging through git: the git engine."""

    def _seeded_through_git(self) -> tuple[str, _Scan, None]:
        """The first snapshot of a repository's top through git alone.

        The private index starts as a copy of the user's, so git's add hashes only the files
        that differ from it (as ``git status`` looks). The entries git would trust without
        looking (assume-unchanged, skip-worktree, submodules) are dropped first, so their files
        are hashed afresh; a ``.gitattributes`` that converts drops every entry.
        """
        self._seed_index = None
        scan = self._scan_dirs(files=True)
        if self._tree_converts(scan):
            self._run("read-tree", "--empty")
        else:
            flagged = self._flagged_by_git()
            if flagged:
                self._drop_entries(flagged)
        try:
            self._stage_all()
        except LoopError as exc:
            # A FIFO, socket or device where the user's index has a file: git's add refuses it.
            if _UNADDABLE not in str(exc) or not self._drop_special_files():
                raise
            self._stage_all()
        return self._write_tree(), scan, None

    def _drop_special_files(self) -> bool:
        """Drop the seeded entries whose path is now a FIFO, socket or device (whether there
        were any): git's add refuses to stage over them, while a snapshot anywhere else (or
        from a fresh index) just leaves such a file out; so does this one."""
        out = self._run("diff-files", "--name-only", "-z", check=False).stdout
        root = os.fsencode(self.root) + b"/"
        special = []
        for path in (p for p in out.split(b"\0") if p):
            with contextlib.suppress(OSError):
                kind = stat.S_IFMT(os.lstat(root + path).st_mode)
                if kind not in (stat.S_IFREG, stat.S_IFLNK, stat.S_IFDIR):
                    special.append(path)
        if special:
            request = b"".join(path + b"\0" for path in special)
            self._run("update-index", "--force-remove", "-z", "--stdin", input=request)
        return bool(special)

    def _stage_all(self) -> None:
        """Stage every file of the workspace, ignored ones included, into the private index.

        The index keeps stat data from the previous call, so only changed files are rehashed.
        A nested repository (a directory with its own ``.git``) is staged as the plain files it
        holds; its ``.git`` is never read.
        """
        config = self._store_config()
        for _round in range(8):
            self._mark_nested()
            proc = self._run("add", "-A", "-f", "--ignore-errors", config=config, check=False)
            err = proc.stderr.decode("utf-8", "replace")
            nested = _NESTED_FAILED in err
            embedded = _EMBEDDED_WARNING in err
            if proc.returncode != 0 and not nested:
                raise LoopError(f"git add failed in workspace {self.root}: {_git_error(proc)}")
            if not nested and not embedded:
                return
            before = set(self._nested)
            self._nested |= self._find_nested(gitlinks=embedded)
            if self._nested == before:
                if proc.returncode == 0:
                    return
                raise LoopError(f"git add failed in workspace {self.root}: {_git_error(proc)}")
        raise LoopError(f"nested repositories keep appearing in workspace {self.root}")

    def _mark_nested(self) -> None:
        """Put a placeholder entry under each known nested repository, so git's walk sees a
        directory it already tracks and descends into it; ``add -A`` then drops the placeholder
        itself (it is not on disk)."""
        if not self._nested:
            return
        lines = b"".join(
            b"100644 " + _EMPTY_BLOB + b"\t" + os.fsencode(f"{d}/{_PLACEHOLDER}") + b"\0"
            for d in sorted(self._nested)
            if os.path.isdir(self.root / d)
        )
        if lines:
            self._run("update-index", "--add", "-z", "--index-info", input=lines)

    def _find_nested(self, *, gitlinks: bool) -> set[str]:
        """Nested repositories git refused (untracked) or recorded as a gitlink."""
        found: set[str] = set()
        out = self._run("ls-files", "-z", "--others").stdout
        found |= {p.rstrip("/") for p in _split_z(out) if p.endswith("/")}
        if gitlinks:
            found |= self._adopt_gitlinks()
        return {d for d in found if os.path.isdir(self.root / d)}

    def _flagged_by_git(self) -> list[tuple[bytes, bool]]:
        """The entries git trusts without looking (see :class:`gitindex.Index`), for an index
        Python does not parse (version 4)."""
        out = self._run("ls-files", "-z", "--stage", "-v").stdout
        flagged = []
        for m in re.finditer(rb"(?:^|\0)(\S) (\d+) [0-9a-f]+ \d\t([^\0]*)", out):
            tag, mode, path = m.groups()
            if mode == b"160000" or tag.islower() or tag == b"S":
                flagged.append((path, mode == b"160000"))
        return flagged

    def _drop_entries(self, flagged: list[tuple[bytes, bool]]) -> None:
        """Drop the seeded entries git would not check against the disk: assume-unchanged and
        skip-worktree ones (an edit to them would go unseen) and submodules (gitlinks: their
        files are staged one by one instead). The next add hashes those paths afresh."""
        self._nested |= {os.fsdecode(path) for path, gitlink in flagged if gitlink}
        request = b"".join(b"0 " + _ZERO_SHA + b"\t" + path + b"\0" for path, _ in flagged)
        self._run("update-index", "-z", "--index-info", input=request)

    def _adopt_gitlinks(self) -> set[str]:
        """Turn gitlink entries of the index into plain directories to be staged file by file."""
        out = self._run("ls-files", "-z", "--stage").stdout
        links = [
            os.fsdecode(m.group(1))
            for m in re.finditer(rb"(?:^|\0)160000 [0-9a-f]+ \d\t([^\0]*)", out)
        ]
        if links:
            request = b"".join(b"0 " + _ZERO_SHA + b"\t" + os.fsencode(p) + b"\0" for p in links)
            self._run("update-index", "-z", "--index-info", input=request)
        self._nested |= set(links)
        return set(links)

    def _changes(self, snap: _Snapshot, new: set[bytes] | None = None) -> list[_Entry]:
        """Stage the current state; the raw changes from the snapshot, every path included.
        ``new``: the files the snapshot did not have, when the caller listed them already."""
        self._model = None  # the private index is about to hold the current state
        self._stage_changes(snap, new)
        entries = self._raw_changes(snap.tree)
        # A repository git recorded as a gitlink without saying so: stage its files.
        if any(e.dst_mode == _GITLINK for e in entries) and self._adopt_gitlinks():
            self._stage_all()
            entries = self._raw_changes(snap.tree)
        # A deleted file is gone from the index but still a snapshot name: should it come back
        # (by the attempt, or by a restore), the next scan must stage it by name.
        self._pending |= {os.fsencode(e.path) for e in entries if e.status == "D"}
        return entries

    def _stage_changes(self, snap: _Snapshot, new: set[bytes] | None = None) -> None:
        """Stage what changed since the snapshot without walking the whole tree.

        ``git add -u`` stats the files the index tracks (every file of the snapshot); a new
        file always moves its directory's ctime, so new files are found by listing only the
        directories whose ctime moved, in a thread beside the add, and their files are staged
        by name with the paths a restore wrote back. This is ``git add -A``'s result without
        git's read of every directory.
        """
        look = _InThread(lambda: self._new_files(snap)) if new is None else None
        try:
            proc = self._run(
                "add", "-u", "--ignore-errors", config=self._store_config(), check=False
            )
        except BaseException:
            if look is not None:
                look.join()
            raise
        if look is not None:
            try:
                new = look.result()
            except OSError:
                new = None  # a directory that cannot be listed: git's walk says what is wrong
        staged = proc.returncode == 0 and new is not None
        if staged and (new or self._pending):
            staged = self._stage_paths(sorted((new or set()) | self._pending))
        if not staged:
            self._stage_all()
        self._pending.clear()

    def _stage_paths(self, paths: Iterable[bytes]) -> bool:
        """Stage these files by name (a path no longer there leaves the index); ``False``
        when git refused one (then a full ``git add`` names the problem)."""
        request = b"".join(p + b"\0" for p in paths)
        args = ("update-index", "--add", "--remove", "--replace", "-z", "--stdin")
        config = self._store_config()
        proc = self._run(*args, input=request, config=config, check=False)
        # update-index skips a path its checks refuse (".GIT", "git~1") with a warning and
        # exit 0: the file would silently be missing from the snapshot, and never restored.
        return proc.returncode == 0 and b"Ignoring path " not in proc.stderr
