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
import subprocess
import tempfile
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
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

_ZERO_SHA = "0" * 40


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
    empty_dirs: frozenset[str] = field(default_factory=frozenset)


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
            raise LoopError(
                "git is not installed or not on PATH; the workspace needs it to snapshot and restore"
            )
        self._git = git
        self._ignore = (*(DEFAULT_IGNORE if default_ignore else ()), *ignore)
        self._snapshot: _Snapshot | None = None
        # Paths (relative, '/'-separated) the last restore removed or rewrote; lets callers and
        # tests see that restore cost scales with the change, not with the tree.
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
            "GIT_AUTHOR_NAME": "reference-loop",
            "GIT_AUTHOR_EMAIL": "reference-loop@localhost",
            "GIT_COMMITTER_NAME": "reference-loop",
            "GIT_COMMITTER_EMAIL": "reference-loop@localhost",
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

    # -- the three operations --------------------------------------------------------------

    def snapshot(self) -> str:
        """Record the current state; return its tree id. A later snapshot replaces the earlier."""
        tree = self._stage_all()
        self._snapshot = _Snapshot(tree, frozenset(self._empty_dirs()))
        return tree

    def diff(self) -> Diff:
        """The real change from the snapshot to the current state (call it before restore)."""
        snap = self._require_snapshot()
        current = self._stage_all()
        if current == snap.tree:
            return Diff(text="", files=[], raw=b"")
        raw = self._run(
            "diff", "--binary", "-M", "--no-color", "--no-ext-diff", "--no-textconv",
            snap.tree, current,
        ).stdout
        names = self._run(
            "diff", "--name-status", "-z", "-M", "--no-ext-diff", snap.tree, current
        ).stdout
        return Diff(text=raw.decode("utf-8", "replace"), files=_parse_name_status(names), raw=raw)

    def restore(self) -> None:
        """Put the workspace back byte-exactly as it was at the snapshot.

        Works whatever state the attempt left (also after an exception mid-attempt). Only the
        paths that differ from the snapshot are removed or rewritten.
        """
        snap = self._require_snapshot()
        touched: list[str] = []
        for _pass in range(2):
            current = self._stage_all()
            if current == snap.tree:
                break
            out = self._run(
                "diff-tree", "-r", "-z", "--no-renames", "--raw", current, snap.tree
            ).stdout
            changed = self._apply_tree_change(out)
            touched += changed
            # A .gitignore the attempt added or edited can hide the attempt's own new files; with
            # the snapshot's ignore rules back in place, one more pass finds and removes them.
            if not any(p.rsplit("/", 1)[-1] == ".gitignore" for p in changed):
                break
        touched += self._fix_directories(snap)
        self.last_restored = touched

    # -- internals -------------------------------------------------------------------------

    def _init_repo(self, gitdir: str) -> None:
        # --template= : no sample hooks or description copied in; nothing we do not need.
        self._run("init", "--quiet", "--template=", gitdir)
        info = os.path.join(gitdir, "info")
        os.makedirs(info, exist_ok=True)
        excludes = os.path.join(info, "exclude")
        with open(excludes, "w", encoding="utf-8") as fh:
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
        try:
            proc = subprocess.run(
                [self._git, *args],
                cwd=self.root,
                env=self._env,
                input=input,
                capture_output=True,
            )
        except FileNotFoundError as exc:
            raise LoopError(
                "git is not installed or not on PATH; the workspace needs it to snapshot and restore"
            ) from exc
        if check and proc.returncode != 0:
            msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = msg[-1] if msg else f"exit {proc.returncode}"
            raise LoopError(f"git {args[0]} failed in workspace {self.root}: {detail}")
        return proc

    def _require_snapshot(self) -> _Snapshot:
        if self._snapshot is None:
            raise LoopError("workspace has no snapshot yet; call snapshot() first")
        return self._snapshot

    def _stage_all(self) -> str:
        """Stage the current state into the private index and return its tree id.

        The index keeps stat data from the previous call, so only changed files are rehashed.
        """
        self._run("add", "-A", "--ignore-errors", "--", ".")
        return self._run("write-tree").stdout.decode().strip()

    def _empty_dirs(self) -> set[str]:
        """Every directory (nested ones too) that holds no tracked file; needs a staged index."""
        out = self._run(
            "ls-files", "-z", "--others", "--directory", "--exclude-standard"
        ).stdout
        found: set[str] = set()
        nested: list[str] = []
        for entry in _split_z(out):
            if not entry.endswith("/"):
                continue  # an untracked file cannot remain right after `add -A`; be safe anyway
            top = entry.rstrip("/")
            found.add(top)
            # git reports only the topmost dir of a tree of empty dirs; record the whole tree.
            for dirpath, dirnames, _files in os.walk(self.root / top):
                rel = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
                dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
                nested.extend(f"{rel}/{d}" for d in dirnames)
        if nested:
            # Ignored dirs (a __pycache__ inside an otherwise empty dir) are not ours to keep.
            ignored = set(
                _split_z(
                    self._run(
                        "check-ignore", "-z", "--stdin", "--no-index",
                        input=b"\0".join(os.fsencode(d + "/") for d in nested) + b"\0",
                        check=False,
                    ).stdout
                )
            )
            found.update(d for d in nested if d + "/" not in ignored and not any(
                d.startswith(i if i.endswith("/") else i + "/") for i in ignored))
        return found

    def _apply_tree_change(self, raw_diff: bytes) -> list[str]:
        """Apply ``diff-tree --raw current snapshot`` output to the index and the work tree."""
        remove: list[tuple[str, str]] = []  # (path, current mode)
        write: list[str] = []
        index_info: list[bytes] = []
        fields = raw_diff.split(b"\0")
        i = 0
        while i + 1 < len(fields) and fields[i]:
            meta = fields[i].decode().lstrip(":").split()
            path = os.fsdecode(fields[i + 1])
            i += 2
            old_mode, new_mode, _old_sha, new_sha, status = meta[0], meta[1], meta[2], meta[3], meta[4]
            if status in ("D", "T"):
                remove.append((path, old_mode))
            if status == "D":
                index_info.append(b"0 " + _ZERO_SHA.encode() + b"\t" + os.fsencode(path))
            else:
                index_info.append(f"{new_mode} {new_sha}\t".encode() + os.fsencode(path))
                write.append(path)
        # Remove what the snapshot does not have first, so a path that changed between file and
        # directory is free before checkout writes it (and we never write through a new symlink).
        for path, mode in remove:
            self._remove_path(path, mode)
        self._run("update-index", "-z", "--index-info", input=b"\0".join(index_info) + b"\0")
        if write:
            # -u refreshes the stat data of what it writes, so the next scan stays cheap.
            self._run(
                "checkout-index", "-f", "-u", "-z", "--stdin",
                input=b"\0".join(os.fsencode(p) for p in write) + b"\0",
            )
        return sorted({p for p, _ in remove} | set(write))

    def _remove_path(self, path: str, mode: str) -> None:
        full = self.root / path
        try:
            if mode == "160000" and full.is_dir() and not full.is_symlink():
                shutil.rmtree(full)  # a nested repository the attempt created
            else:
                os.unlink(full)
        except FileNotFoundError:
            pass
        # Drop parent directories the removal left empty; restore recreates any that the
        # snapshot had (as parents of its files, or in its empty-dir list).
        parent = Path(path).parent
        while parent != Path("."):
            try:
                os.rmdir(self.root / parent)
            except OSError:
                break
            parent = parent.parent

    def _fix_directories(self, snap: _Snapshot) -> list[str]:
        """Recreate the snapshot's empty dirs; remove empty dirs the attempt created."""
        touched: list[str] = []
        for d in sorted(snap.empty_dirs):
            if not os.path.isdir(self.root / d):
                os.makedirs(self.root / d, exist_ok=True)
                touched.append(d + "/")
        now = self._empty_dirs()
        extra = now - snap.empty_dirs
        # Deepest first, so a new tree of empty dirs goes away bottom-up; a dir holding only
        # ignored files (e.g. __pycache__) is not empty and stays: ignored files are not ours.
        for d in sorted(extra, key=lambda p: p.count("/"), reverse=True):
            try:
                os.rmdir(self.root / d)
                touched.append(d + "/")
            except OSError:
                pass
        return touched


def _cfg_path(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _split_z(data: bytes) -> list[str]:
    return [os.fsdecode(p) for p in data.split(b"\0") if p]


def _parse_name_status(data: bytes) -> list[FileChange]:
    parts = _split_z(data)
    changes: list[FileChange] = []
    i = 0
    while i < len(parts):
        status = parts[i]
        letter = status[0]
        if letter in ("R", "C"):
            changes.append(FileChange(path=parts[i + 2], status=letter, old_path=parts[i + 1]))
            i += 3
        else:
            changes.append(FileChange(path=parts[i + 1], status=letter))
            i += 2
    return changes


def changed_paths(diff: Diff) -> Iterable[str]:
    """Every path a diff touches (both sides of a rename)."""
    for change in diff.files:
        if change.old_path:
            yield change.old_path
        yield change.path
