"""The private git store a workspace keeps outside the tree: its layout, the seed from the
user's repository, running git, and the plumbing reads (trees, raw diffs, blob sizes, ignores).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from reference_loop._workspace import gitindex
from reference_loop._workspace.gitdirs import GitDirs
from reference_loop._workspace.gitio import (
    _BULK_CHECKIN,
    _BYTE_EXACT_ATTRIBUTES,
    _CONFIG,
    _NO_GIT,
    _PATCH_ARGS,
    _SAFE_CONFIG,
    _SAFE_ENV,
    _TOP_DIRS,
    _WIDE_WINDOWS,
    _ZERO_HEX,
    _ZERO_SHA,
    _cfg_path,
    _config_args,
    _git_error,
    _InThread,
    _other_object_format,
    _parse_raw,
    _plain_layout,
    _split_z,
    _user_converts,
)
from reference_loop._workspace.limits import Limits
from reference_loop._workspace.records import Refused, _Entry, _Snapshot
from reference_loop.errors import LoopError


class PrivateGit:
    """The private GIT_DIR and index, and the git commands run in them.

    The state below is set by ``Workspace.__init__``; it is declared here because every layer
    of the workspace (scan, staging, restore, the fast paths) works on it.
    """

    root: Path
    engine: str
    seeded: bool
    last_restored: list[str]
    _git: str
    _base_env: dict[str, str]
    _env: dict[str, str]
    _ignore: tuple[str, ...]
    _tmp: str
    _index: str
    _in_memory: bool
    _umask: int
    _snapshot: _Snapshot | None
    _nested: set[str]
    _pending: set[bytes]
    _seed_index: bytes | None
    _model: gitindex.Index | None
    _gitdirs: GitDirs
    limits: Limits
    _refused: list[Refused]

    def _store_parent(self) -> str | None:
        """Where the private store goes: in memory (``/dev/shm``) for the top of a repository,
        whose store only holds what differs from the user's index (creating and deleting its
        few hundred small files on a busy disk costs more than the whole scan); the default
        temp directory otherwise, where the first snapshot holds every byte of the tree."""
        shm = "/dev/shm"
        if os.path.lexists(self.root / ".git") and os.path.isdir(shm) and os.access(shm, os.W_OK):
            return shm
        return None

    # -- internals -------------------------------------------------------------------------

    def _init_repo(self, gitdir: str) -> None:
        # Laid out by hand (what `git init --template=` writes), one process less per run.
        for sub in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "info"):
            os.makedirs(os.path.join(gitdir, sub))
        with open(os.path.join(gitdir, "HEAD"), "w", encoding="utf-8") as fh:
            fh.write("ref: refs/heads/main\n")
        info = os.path.join(gitdir, "info")
        # The ignore rules decide what the diff shows (check-ignore reads them); adds use -f.
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
                    loose=0 if self._in_memory else 1,
                )
            )

    def _seed_from_user_repo(self, gitdir: str) -> bool:
        """When ``root`` is the top of a git repository, start from a copy of its index and read
        its objects as an alternate: the first add then hashes only the files that differ from
        the user's index (like ``git status``), not the whole tree.

        The objects read are never the user's live store, which an attempt can rewrite or
        delete: they are copied into the private store first and the alternate is that copy.
        A ``.git`` directory of the tree is copied whole (:mod:`gitdirs`, which also restores
        it); the objects of a git dir outside the tree (a gitfile, a linked worktree) are
        copied alone (nothing outside the tree is restored). A repository with alternates of
        its own is hashed file by file. Nothing is written to the user's repository: the index
        is copied (with its mtime, which git's racy-entry check relies on).
        """
        dotgit = self.root / ".git"
        if not os.path.lexists(dotgit) or dotgit.is_symlink():
            return False  # not the top of a repository (a folder inside one is not seeded)
        found = _plain_layout(str(self.root)) or self._ask_git_for_dirs()
        if found is None:
            return False
        user_gitdir, common = found
        inside = dotgit.is_dir() and {os.path.realpath(user_gitdir), os.path.realpath(common)} == {
            str(dotgit)
        }
        if os.path.lexists(os.path.join(common, "objects", "info", "alternates")):
            return False  # objects borrowed from outside the tree
        index = os.path.join(user_gitdir, "index")
        objects = os.path.join(common, "objects")
        # A split index needs its shared part beside it; a sparse checkout leaves entries that
        # are not on disk. Neither is worth the risk: fall back to hashing the tree.
        if not os.path.isfile(index) or not os.path.isdir(objects):
            return False
        if any(n.startswith("sharedindex.") for n in os.listdir(user_gitdir)):
            return False
        if os.path.exists(os.path.join(common, "info", "sparse-checkout")):
            return False
        if _user_converts(user_gitdir, common):
            return False  # the index's blobs may not be the files' bytes: hash every file
        if _other_object_format(common):
            return False  # a SHA-256 index and objects: the private store is SHA-1
        try:
            with open(index, "rb") as fh:
                data = fh.read()
                st = os.fstat(fh.fileno())
            # The copy is taken after the index was read: every object the index names is in
            # the copy (git writes objects before the index that names them).
            if inside:
                self._gitdirs.record([".git"])
                copy = self._gitdirs.copy_of(".git")
                if copy is None:
                    return False
            else:
                copy = os.path.join(self._tmp, "outside")
                _copy_objects(os.path.join(common, "objects"), os.path.join(copy, "objects"))
            # The fast engine shares the user's index as a split index's base (git's add then
            # writes only what it changed); the git engine copies it whole.
            split = gitindex.split_index_over(data) if self.engine == "fast" else None
            if split is not None:
                # The user's index, byte for byte, is the shared part of a split index: the
                # first add then writes only the entries it changed, never the whole index.
                shared = os.path.join(gitdir, "sharedindex." + data[-20:].hex())
                with open(shared, "wb") as fh:
                    fh.write(data)
            with open(self._index, "wb") as fh:
                fh.write(data if split is None else split)
            os.utime(self._index, ns=(st.st_atime_ns, st.st_mtime_ns))
        except OSError:
            return False
        alternates = os.path.join(gitdir, "objects", "info")
        os.makedirs(alternates, exist_ok=True)
        with open(os.path.join(alternates, "alternates"), "w", encoding="utf-8") as fh:
            fh.write(os.path.join(copy, "objects") + "\n")
        # Which entries the first add must not trust is worked out beside that add.
        self._seed_index = data
        return True

    def _ask_git_for_dirs(self) -> tuple[str, str] | None:
        """(git dir, common dir) of the repository whose top is ``root``, as git sees it."""
        # The user's repository config is read (it says where the dirs are), never the user's
        # global or system config; nothing a config names is run (see gitio._SAFE_CONFIG).
        env = {**self._base_env, **_SAFE_ENV, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
        try:
            proc = subprocess.run(
                [
                    self._git,
                    "--no-pager",
                    *_config_args(_SAFE_CONFIG),
                    "rev-parse",
                    "--path-format=absolute",
                    *_TOP_DIRS,
                ],
                check=False,
                cwd=self.root,
                env=env,
                capture_output=True,
            )
        except OSError:
            return None
        lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
        if proc.returncode != 0 or len(lines) != 3:
            return None
        top, user_gitdir, common = lines
        if os.path.realpath(top) != str(self.root):
            return None
        return user_gitdir, common

    def _run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        config: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        with self._popen(*args, config=config, env=env) as popen:
            try:
                out, err = popen.communicate(input)
            except BaseException:  # as subprocess.run does: no git left running
                popen.kill()
                raise
        proc = subprocess.CompletedProcess(popen.args, popen.returncode, out, err)
        if check and proc.returncode != 0:
            raise LoopError(f"git {args[0]} failed in workspace {self.root}: {_git_error(proc)}")
        return proc

    def _popen(
        self,
        *args: str,
        config: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        stderr: int = subprocess.PIPE,
        bufsize: int = -1,
    ) -> subprocess.Popen[bytes]:
        """Start git in the workspace with pipes to talk to it; one clear error when the
        workspace or git is gone."""
        if not self.root.is_dir():
            raise LoopError(f"workspace directory is gone: {self.root}")
        try:
            return subprocess.Popen(
                [self._git, "--no-pager", *_config_args((*_SAFE_CONFIG, *config)), *args],
                cwd=self.root,
                env=self._env if env is None else env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                bufsize=bufsize,
            )
        except FileNotFoundError as exc:
            raise LoopError(_NO_GIT) from exc

    def _require_snapshot(self) -> _Snapshot:
        if self._snapshot is None:
            raise LoopError("workspace has no snapshot yet; call snapshot() first")
        return self._snapshot

    def _store_config(self) -> list[str]:
        """Config for a git command that stores objects. On disk, the objects of one command go
        straight into one pack: writing thousands of loose files (and deleting them on close)
        costs more than hashing them. In memory a loose object is cheaper than bulk
        check-in's per-object pack bookkeeping."""
        return [] if self._in_memory else [_BULK_CHECKIN, "pack.compression=1"]

    def _write_tree(self) -> str:
        # --missing-ok: git otherwise looks up every blob of each tree it rewrites (20,000
        # lookups when every directory holds a change: most of write-tree's time). Every blob
        # the index names was written by an add, or is the user's index's, which the clean
        # first snapshot trusts the same way (it is the user's cached tree).
        return self._run("write-tree", "--missing-ok").stdout.decode().strip()

    def _raw_changes(self, tree: str) -> list[_Entry]:
        args = ("--raw", "-z", "--no-abbrev", "--no-renames", "--no-ext-diff")
        return _parse_raw(self._run("diff-index", "--cached", *args, tree).stdout)[0]

    def _diff_subset(
        self,
        tree: str,
        entries: list[_Entry],
        extra: list[str],
        trees: Callable[[list[_Entry]], str] | None = None,
    ) -> bytes:
        """The patch from ``tree`` to ``tree`` plus just ``entries``' changes (that tree made
        by ``trees`` when given, else by :meth:`_subset_tree`): two trees are compared
        without looking at the work tree, so a large file is never read."""
        other = trees(entries) if trees is not None else self._subset_tree(tree, entries)
        renames = extra if extra else ["--no-renames"]
        return self._run("diff-tree", "-r", *_PATCH_ARGS, *renames, tree, other).stdout

    def _subset_tree(self, tree: str, entries: list[_Entry]) -> str:
        """``tree`` with just ``entries``' changes, built in a temporary index (no path list
        has to fit on a command line)."""
        index = os.path.join(self._tmp, "subset-index")
        env = {**self._env, "GIT_INDEX_FILE": index}
        try:
            self._run("read-tree", tree, env=env)
            request = b"".join(
                (
                    b"0 " + _ZERO_SHA
                    if e.status == "D"
                    else e.dst_mode.encode() + b" " + e.dst_sha.encode()
                )
                + b"\t"
                + os.fsencode(e.path)
                + b"\0"
                for e in entries
            )
            self._run("update-index", "-z", "--index-info", input=request, env=env)
            return self._run("write-tree", env=env).stdout.decode().strip()
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(index)

    def _not_ignored_entries(self, entries: list[_Entry]) -> list[_Entry]:
        return self._start_ignore_check(entries)()

    def _start_ignore_check(self, entries: list[_Entry]) -> Callable[[], list[_Entry]]:
        """Start ``git check-ignore`` on the entries' paths; the call returned waits for it
        and gives the entries no ignore rule hides. The process starts before this returns,
        so the caller's own work (holding the GIL) does not delay it."""
        # check-ignore refuses a path beyond a symlink: a snapshot file below a directory the
        # attempt replaced by one. Such a file is always shown: the patch deletes it anyway
        # (the symlink takes its directory's place, which a patch that kept it could not do).
        beyond = self._beyond_symlinks(e.path for e in entries)
        asked = [e for e in entries if e.path not in beyond] if beyond else entries
        if not asked:
            return lambda: entries
        request = b"".join(os.fsencode(e.path) + b"\0" for e in asked)
        # check-ignore takes paths, not pathspecs, and refuses the literal-pathspec switch.
        env = {k: v for k, v in self._env.items() if k != "GIT_LITERAL_PATHSPECS"}
        proc = self._popen("check-ignore", "-z", "--stdin", "--no-index", env=env)
        talk = _InThread(lambda: proc.communicate(request))

        def shown() -> list[_Entry]:
            out, err = talk.result()
            if proc.returncode not in (0, 1):
                done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
                raise LoopError(
                    f"git check-ignore failed in workspace {self.root}: {_git_error(done)}"
                )
            ignored = set(_split_z(out))
            return [e for e in entries if e.path not in ignored]

        return shown

    def _beyond_symlinks(self, paths: Iterable[str]) -> set[str]:
        """The paths with a symlink among their leading components (each directory is looked
        at once)."""
        real: dict[str, bool] = {"": True}
        found: set[str] = set()
        for path in paths:
            here = ""
            for part in path.split("/")[:-1]:
                here = f"{here}/{part}" if here else part
                if here not in real:
                    real[here] = not os.path.islink(self.root / here)
                if not real[here]:
                    found.add(path)
                    break
        return found

    def _blob_sizes(self, entries: list[_Entry]) -> dict[str, int]:
        """Blob id -> size, for every blob the entries name (one ``cat-file --batch-check``).

        Only object headers are read, so the packs are mapped in large windows: with git's
        small windows (kept for reading large blobs), looking up thousands of objects spread
        over a large pack spends more time mapping and unmapping than reading.
        """
        shas = {s for e in entries for s in (e.src_sha, e.dst_sha) if s != _ZERO_HEX}
        if not shas:
            return {}
        request = "".join(f"{s}\n" for s in sorted(shas)).encode()
        out = self._run(
            "cat-file",
            "--batch-check=%(objectname) %(objectsize)",
            input=request,
            config=_WIDE_WINDOWS,
        )
        sizes = {}
        for line in out.stdout.decode().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                sizes[parts[0]] = int(parts[1])
        return sizes

    def _fetch_blobs(self, shas: Sequence[str]) -> dict[str, bytes]:
        """Small blobs read whole, through one ``git cat-file --batch``."""
        request = "".join(f"{sha}\n" for sha in shas).encode()
        out = self._run("cat-file", "--batch", input=request, config=_WIDE_WINDOWS).stdout
        blobs: dict[str, bytes] = {}
        pos = 0
        for sha in shas:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            if len(header) != 3:
                shown = b" ".join(header).decode("utf-8", "replace") or sha
                raise LoopError(f"snapshot object missing from the private store: {shown}")
            size = int(header[2])
            blobs[sha] = out[end + 1 : end + 1 + size]
            pos = end + 2 + size
        return blobs


def _copy_objects(src: str, dst: str) -> None:
    """Copy a git objects folder (loose objects, packs) file by file, never through a link.

    Its own walk (one ``scandir`` per folder, each entry's kind from it) and ``sendfile``
    copies: a repository of 20,000 loose objects costs one open, create and close per object
    and no other call (``shutil.copyfile`` on ``os.walk`` spent three times the CPU).
    """
    top, out = os.fsencode(src), os.fsencode(dst)
    os.makedirs(out)
    todo = [b""]
    while todo:
        rel = todo.pop()
        with os.scandir(top + rel) as it:
            for entry in it:
                name = rel + b"/" + entry.name
                if entry.is_dir(follow_symlinks=False):
                    os.mkdir(out + name, 0o700)
                    todo.append(name)
                elif entry.is_file(follow_symlinks=False):
                    _send_file(top + name, out + name)


def _send_file(src: bytes, dst: bytes) -> None:
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        out = os.open(
            dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o400
        )
        try:
            offset = 0
            while True:
                sent = os.sendfile(out, fd, offset, 1 << 30)
                if not sent:
                    break
                offset += sent
        finally:
            os.close(out)
    finally:
        os.close(fd)
