"""Snapshot a directory, diff it against the snapshot, and restore it byte-exactly.

The loop lets an attempter edit a workspace freely, then needs (1) the *real* change it made and
(2) the workspace put back exactly as it was. Both come from git's object store, used through a
private ``GIT_DIR``/``GIT_INDEX_FILE`` in a temp directory outside the workspace: it works in any
directory (inside or outside a user's repository) and never reads or writes the user's index,
refs, stash or config. The private index is kept between calls so git's stat cache makes every
scan cost what ``git status`` costs, and restore only touches the paths that changed.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reference_loop.errors import LoopError

# Files a verifier run creates on its own (pytest, Python, common tools); never diffed or restored.
DEFAULT_IGNORE: tuple[str, ...] = (
    "__pycache__/",
    "*.pyc",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    ".coverage",
    ".tox/",
    ".nox/",
    ".venv/",
    "node_modules/",
)

# Attributes the workspace's own .gitattributes could set that would make the stored bytes differ
# from the file's bytes (eol conversion, filters, $Id$ expansion); info/attributes overrides them.
_BYTE_EXACT_ATTRIBUTES = "* -text -eol -ident -filter -working-tree-encoding\n"

# The private repository's whole config: user/system config is switched off by the environment.
_CONFIG = """\
[core]
\trepositoryformatversion = 0
\tbare = false
\tautocrlf = false
\tsafecrlf = false
\teol = lf
\tfilemode = true
\tsymlinks = true
\tquotepath = false
\tfsmonitor = false
\tuntrackedCache = false
\tlooseCompression = 1
\thooksPath = {hooks}
\texcludesFile = {excludes}
\tattributesFile = {attributes}
[gc]
\tauto = 0
[advice]
\taddEmbeddedRepo = false
\taddIgnoredFile = false
\tdetachedHead = false
[diff]
\trenames = true
\tnoprefix = false
\tmnemonicPrefix = false
\tsubmodule = short
"""

_SYMLINK = "120000"
_GITLINK = "160000"


@dataclass
class FileChange:
    """One changed path. ``status``: A added, M modified (content or mode), D deleted,
    R renamed (``old_path`` is the source), T type changed (e.g. file <-> symlink)."""

    path: str
    status: str
    old_path: str | None = None

    def to_dict(self) -> dict:
        return {"path": self.path, "status": self.status, "old_path": self.old_path}


@dataclass
class Diff:
    """The real change since the snapshot. ``text`` is ``git diff --binary -M`` output (it applies
    with ``git apply`` to the snapshot); ``raw`` holds the same patch as exact bytes."""

    text: str
    files: list[FileChange]
    raw: bytes = b""

    @property
    def empty(self) -> bool:
        return not self.files

    def to_dict(self) -> dict:
        return {"text": self.text, "files": [f.to_dict() for f in self.files]}


@dataclass
class _Snapshot:
    tree: str
    # Directories with no tracked file below them (git does not record empty dirs); every
    # directory in this set, nested ones included, is recreated by restore.
    empty_dirs: frozenset[str]
    # Every directory of the snapshot ("" is the root) -> (inode, mtime_ns, when it was read).
    # A new directory changes its parent's mtime, so restore only lists directories whose
    # mtime moved (or is too recent to trust) instead of walking the tree again.
    dirs: dict[str, tuple[int, int, int]]


@dataclass
class _Entry:
    """One line of ``git diff --raw`` from the snapshot (src) to the current state (dst)."""

    status: str
    src_mode: str
    src_sha: str
    path: str
    new_path: str | None = None  # renames: where the file went


class Workspace:
    """Snapshot/diff/restore of the directory ``root`` through a private git object store.

    ``ignore`` adds gitignore-style patterns to :data:`DEFAULT_IGNORE` (``default_ignore=False``
    drops the defaults); the workspace's own ``.gitignore`` files apply too. Ignored paths are
    neither diffed nor touched by restore. Use as a context manager, or call :meth:`close`.
    """

    def __init__(
        self, root: Path, *, ignore: Sequence[str] = (), default_ignore: bool = True
    ) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise LoopError(f"workspace is not a directory: {root}")
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        git = shutil.which("git", path=base_env.get("PATH", os.defpath))
        if git is None:
            raise LoopError(_NO_GIT)
        self._git = git
        self._ignore = (*(DEFAULT_IGNORE if default_ignore else ()), *ignore)
        self._snapshot: _Snapshot | None = None
        # Paths (relative, '/'-separated; directories end in '/') the last restore removed,
        # rewrote or recreated: restore's cost scales with this list, not with the tree.
        self.last_restored: list[str] = []
        self._tmp = tempfile.mkdtemp(prefix="reference-loop-ws-")
        self._finalizer = weakref.finalize(self, shutil.rmtree, self._tmp, ignore_errors=True)
        gitdir = os.path.join(self._tmp, "git")
        self._env = {
            **base_env,
            "GIT_DIR": gitdir,
            "GIT_WORK_TREE": str(self.root),
            "GIT_INDEX_FILE": os.path.join(self._tmp, "index"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_LITERAL_PATHSPECS": "1",
            "LC_ALL": "C",
        }
        try:
            self._init_repo(gitdir)
        except BaseException:
            self.close()
            raise

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the private GIT_DIR. The workspace itself is left as it is."""
        self._finalizer()

    @property
    def snapshot_tree(self) -> str | None:
        return self._snapshot.tree if self._snapshot else None

    # -- the operations --------------------------------------------------------------------

    def snapshot(self) -> str:
        """Record the current state; return its tree id. A later snapshot replaces the earlier."""
        snap = self._snapshot
        if snap is None:
            self._stage_all()
        else:
            # Snapshotting again right after a restore is common (a snapshot per attempt): if
            # nothing differs from the current snapshot, keep it and skip the extra scans.
            _diff, entries = self._changes(snap, patch=False)
            if not entries:
                moved, new, missing = self._dir_changes(snap)
                if not new and not missing:
                    snap.dirs.update(self._stat_dirs(moved))
                    return snap.tree
        tree = self._run("write-tree").stdout.decode().strip()
        empty = self._empty_dirs()
        listed = self._run("ls-tree", "-r", "-d", "-z", "--name-only", tree).stdout
        self._snapshot = _Snapshot(
            tree, frozenset(empty), self._stat_dirs({"", *empty, *_split_z(listed)})
        )
        return tree

    def diff(self) -> Diff:
        """The real change from the snapshot to the current state (call it before restore)."""
        diff, _entries = self._changes(self._require_snapshot(), patch=True)
        return diff

    def restore(self) -> None:
        """Put the workspace back byte-exactly as it was at the snapshot.

        Works whatever state the attempt left (also after an exception mid-attempt): it looks at
        the workspace afresh. Only the paths that differ from the snapshot are written.
        """
        snap = self._require_snapshot()
        # An attempt that removed the whole workspace gets it back, like any deleted directory.
        self.root.mkdir(parents=True, exist_ok=True)
        _diff, entries = self._changes(snap, patch=False)
        self._restore(snap, entries)

    def diff_and_restore(self) -> Diff:
        """:meth:`diff` then :meth:`restore` with one look at the workspace instead of two.

        The loop's normal path after the verifier; the saving is one full scan per attempt.
        """
        snap = self._require_snapshot()
        diff, entries = self._changes(snap, patch=True)
        self._restore(snap, entries)
        return diff

    # -- internals -------------------------------------------------------------------------

    def _init_repo(self, gitdir: str) -> None:
        # --template= : no sample hooks or description copied in; nothing we do not need.
        self._run("init", "--quiet", "--template=", gitdir)
        info = os.path.join(gitdir, "info")
        os.makedirs(info, exist_ok=True)
        with open(os.path.join(info, "exclude"), "w", encoding="utf-8") as fh:
            fh.write("".join(f"{p}\n" for p in self._ignore))
        with open(os.path.join(info, "attributes"), "w", encoding="utf-8") as fh:
            fh.write(_BYTE_EXACT_ATTRIBUTES)
        empty = os.path.join(self._tmp, "empty")
        open(empty, "w").close()
        with open(os.path.join(gitdir, "config"), "w", encoding="utf-8") as fh:
            # core.excludesFile/attributesFile point at an empty file so the user's XDG
            # ~/.config/git/{ignore,attributes} cannot change what is snapshotted.
            fh.write(
                _CONFIG.format(
                    hooks=_cfg_path(os.path.join(self._tmp, "no-hooks")),
                    excludes=_cfg_path(empty),
                    attributes=_cfg_path(empty),
                )
            )

    def _run(
        self, *args: str, input: bytes | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[bytes]:
        if not self.root.is_dir():
            raise LoopError(f"workspace directory is gone: {self.root}")
        try:
            proc = subprocess.run(
                [self._git, *args], cwd=self.root, env=self._env, input=input, capture_output=True
            )
        except FileNotFoundError as exc:
            raise LoopError(_NO_GIT) from exc
        if check and proc.returncode != 0:
            msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            # git ends with a generic "fatal: adding files failed"; the cause is the first error.
            errors = [line for line in msg if line.startswith("error:")]
            detail = (errors or msg or [f"exit {proc.returncode}"])[0 if errors else -1]
            raise LoopError(f"git {args[0]} failed in workspace {self.root}: {detail}")
        return proc

    def _require_snapshot(self) -> _Snapshot:
        if self._snapshot is None:
            raise LoopError("workspace has no snapshot yet; call snapshot() first")
        return self._snapshot

    def _stage_all(self) -> None:
        """Stage the current state into the private index.

        The index keeps stat data from the previous call, so only changed files are rehashed.
        """
        self._run("add", "-A", "--ignore-errors")

    def _changes(self, snap: _Snapshot, *, patch: bool) -> tuple[Diff, list[_Entry]]:
        """Stage the current state and compare it with the snapshot: one git diff process gives
        the raw entries (modes and blob ids, for restore) and, with ``patch``, the patch text."""
        self._stage_all()
        args = ["diff", "--cached", "--raw", "-z", "--no-abbrev", "--no-ext-diff", "--no-textconv"]
        args += ["-M", "-p", "--binary", "--no-color"] if patch else ["--no-renames"]
        out = self._run(*args, snap.tree).stdout
        entries, pos = _parse_raw(out)
        patch_bytes = out[pos:] if patch else b""
        files = [
            FileChange(e.new_path, "R", e.path) if e.new_path else FileChange(e.path, e.status)
            for e in entries
        ]
        text = patch_bytes.decode("utf-8", "replace")
        return Diff(text=text, files=files, raw=patch_bytes), entries

    def _restore(self, snap: _Snapshot, entries: list[_Entry]) -> None:
        try:
            self._restore_entries(snap, entries)
        except OSError as exc:
            # e.g. a directory the attempt made unwritable: say where, in one line.
            where = os.fsdecode(exc.filename) if exc.filename is not None else str(self.root)
            raise LoopError(f"restore failed at {where}: {exc.strerror or exc}") from exc

    def _restore_entries(self, snap: _Snapshot, entries: list[_Entry]) -> None:
        touched: list[str] = []
        for _pass in range(2):
            changed = self._revert(snap, entries)
            touched += changed
            # A .gitignore the attempt added or edited can hide the attempt's own new files; with
            # the snapshot's ignore rules back in place, one more look finds and removes them.
            if not any(p.rsplit("/", 1)[-1] == ".gitignore" for p in changed):
                break
            _diff, entries = self._changes(snap, patch=False)
        touched += self._fix_directories(snap)
        self.last_restored = touched

    def _revert(self, snap: _Snapshot, entries: list[_Entry]) -> list[str]:
        """Undo the raw diff entries in the work tree, writing snapshot blobs from the store.

        The private index is left holding the attempt's entries for these paths: their stat data
        no longer matches, so the next scan rehashes just them (a few files) and the index
        needs no extra write here.
        """
        remove: list[str] = []
        write: dict[str, tuple[str, str]] = {}  # path -> (mode, blob id) at the snapshot
        for e in entries:
            if e.status == "A":
                remove.append(e.path)
            elif e.new_path:  # rename: the new name goes, the old one comes back
                remove.append(e.new_path)
                write[e.path] = (e.src_mode, e.src_sha)
            else:  # D, M, T
                if e.status == "T":
                    remove.append(e.path)
                write[e.path] = (e.src_mode, e.src_sha)
        # Remove what the snapshot does not have first, so a path that changed between file and
        # directory is free before the snapshot's version is written.
        for path in remove:
            self._remove_path(path, snap)
        if write:
            self._write_from_store(write)
        return sorted(set(remove) | set(write))

    def _write_from_store(self, write: dict[str, tuple[str, str]]) -> None:
        blobs = sorted({sha for mode, sha in write.values() if mode != _GITLINK})
        data: dict[str, bytes] = {}
        if blobs:
            request = "".join(f"{b}\n" for b in blobs).encode()
            out = self._run("cat-file", "--batch", input=request).stdout
            pos = 0
            while pos < len(out):
                nl = out.index(b"\n", pos)
                header = out[pos:nl].split()
                if len(header) != 3:
                    missing = out[pos:nl].decode("utf-8", "replace")
                    raise LoopError(f"snapshot object missing from the private store: {missing}")
                size = int(header[2])
                data[header[0].decode()] = out[nl + 1 : nl + 1 + size]
                pos = nl + 1 + size + 1
        for path, (mode, sha) in sorted(write.items()):
            full = os.fsencode(self.root / path)
            self._make_parents(path)
            _clear(full)
            if mode == _SYMLINK:
                os.symlink(data[sha], full)
            elif mode == _GITLINK:
                os.mkdir(full)  # what git checks out for a nested repository: an empty dir
            else:
                # O_EXCL|O_NOFOLLOW: a fresh file, never through a link; umask applies, as for git.
                fd = os.open(
                    full,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                    0o777 if mode == "100755" else 0o666,
                )
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data[sha])

    def _make_parents(self, path: str) -> None:
        """Create the leading directories of ``path``; like git, replace any leading component
        that is not a real directory (a symlink would let a write land outside the workspace)."""
        parts = path.split("/")[:-1]
        current = self.root
        for part in parts:
            current = current / part
            try:
                st = os.lstat(current)
            except FileNotFoundError:
                os.mkdir(current)
                continue
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(current)
                os.mkdir(current)

    def _remove_path(self, path: str, snap: _Snapshot) -> None:
        # A file, a symlink, or a nested repository (gitlink) the attempt created.
        _clear(os.fsencode(self.root / path))
        # Drop parent directories the removal left empty, unless the snapshot had them.
        parent = path.rpartition("/")[0]
        while parent and parent not in snap.dirs:
            try:
                os.rmdir(self.root / parent)
            except OSError:
                break
            parent = parent.rpartition("/")[0]

    def _empty_dirs(self) -> set[str]:
        """Every directory (nested ones too) that holds no tracked file; needs a staged index."""
        out = self._run("ls-files", "-z", "--others", "--directory", "--exclude-standard").stdout
        found: set[str] = set()
        nested: list[str] = []
        for entry in _split_z(out):
            if not entry.endswith("/"):
                continue  # an untracked file cannot remain right after `add -A`; be safe anyway
            top = entry.rstrip("/")
            found.add(top)
            nested.extend(self._subdirs(top))  # git reports only the top of a tree of empty dirs
        return found | set(self._not_ignored(nested))

    def _subdirs(self, top: str) -> list[str]:
        out = []
        for dirpath, dirnames, _files in os.walk(self.root / top):
            rel = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
            out.extend(f"{rel}/{d}" for d in dirnames)
        return out

    def _not_ignored(self, dirs: list[str]) -> list[str]:
        """The directories not matched by an ignore rule (nor inside an ignored one)."""
        if not dirs:
            return []
        out = self._run(
            "check-ignore",
            "-z",
            "--stdin",
            "--no-index",
            input=b"\0".join(os.fsencode(d + "/") for d in dirs) + b"\0",
            check=False,
        ).stdout
        ignored = {p.rstrip("/") for p in _split_z(out)}
        return [
            d for d in dirs if d not in ignored and not any(d.startswith(i + "/") for i in ignored)
        ]

    def _stat_dirs(self, dirs: Iterable[str]) -> dict[str, tuple[int, int, int]]:
        now = time.time_ns()
        out = {}
        for d in dirs:
            try:
                st = os.lstat(self.root / d)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                out[d] = (st.st_ino, st.st_mtime_ns, now)
        return out

    def _fix_directories(self, snap: _Snapshot) -> list[str]:
        """Recreate the snapshot's empty dirs; remove empty dirs the attempt created.

        A directory that holds only ignored files (e.g. a new __pycache__) is not empty and stays.
        """
        touched: list[str] = []
        for d in sorted(snap.empty_dirs):
            if not os.path.isdir(self.root / d):
                os.makedirs(self.root / d, exist_ok=True)
                touched.append(d + "/")
        moved, new, _missing = self._dir_changes(snap)
        # Deepest first, so a new tree of empty dirs goes away bottom-up.
        for d in sorted(new, key=lambda p: p.count("/"), reverse=True):
            try:
                os.rmdir(self.root / d)
                touched.append(d + "/")
            except OSError:
                pass  # holds ignored files: not ours to remove
        snap.dirs.update(self._stat_dirs(moved))
        return touched

    def _dir_changes(self, snap: _Snapshot) -> tuple[list[str], list[str], bool]:
        """(directories whose mtime moved, new non-ignored directories, whether a snapshot
        directory is missing). Only directories whose mtime moved are listed: a new directory
        always changes its parent's mtime."""
        moved: list[str] = []
        candidates: list[str] = []
        missing = False
        for d, (ino, mtime, seen) in snap.dirs.items():
            try:
                st = os.lstat(self.root / d)
            except OSError:
                missing = True
                continue
            # A change within the filesystem's timestamp granularity of the recording could leave
            # mtime equal; such recent directories are always listed.
            if (st.st_ino, st.st_mtime_ns) == (ino, mtime) and mtime < seen - _RACY_NS:
                continue
            moved.append(d)
            if not stat.S_ISDIR(st.st_mode):
                missing = True
                continue
            with os.scandir(self.root / d) as it:
                for entry in it:
                    rel = f"{d}/{entry.name}" if d else entry.name
                    if entry.is_dir(follow_symlinks=False) and rel not in snap.dirs:
                        candidates.append(rel)
        new: list[str] = []
        if candidates:
            nested = [sub for top in candidates for sub in self._subdirs(top)]
            new = self._not_ignored(candidates + nested)
        return moved, new, missing


_NO_GIT = "git is not installed or not on PATH; the workspace needs it to snapshot and restore"
# Directories modified less than this long before we recorded them are listed on every restore.
_RACY_NS = 2_000_000_000


def _cfg_path(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _split_z(data: bytes) -> list[str]:
    return [os.fsdecode(p) for p in data.split(b"\0") if p]


def _parse_raw(data: bytes) -> tuple[list[_Entry], int]:
    """``git diff --raw -z --no-abbrev`` records -> (entries, offset where the patch starts).

    Parsed by position, not by splitting on NUL: a patch of a "text" file may contain NULs.
    """
    entries: list[_Entry] = []
    pos = 0
    while data.startswith(b":", pos):
        end = data.index(b"\0", pos)
        src_mode, _dst_mode, src_sha, _dst_sha, status = data[pos + 1 : end].decode().split()
        pos = end + 1
        paths = []
        for _ in range(2 if status[0] in "RC" else 1):
            end = data.index(b"\0", pos)
            paths.append(os.fsdecode(data[pos:end]))
            pos = end + 1
        new_path = paths[1] if len(paths) == 2 else None
        entries.append(_Entry(status[0], src_mode, src_sha, paths[0], new_path))
    if data.startswith(b"\0", pos):  # the raw block's terminator before the patch
        pos += 1
    return entries, pos


def _clear(path: bytes) -> None:
    """Remove whatever is at ``path`` (file, symlink, or a directory in the way), if anything."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)
