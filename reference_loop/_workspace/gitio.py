"""Talking to git for the workspace: the private store's config, raw-diff parsing, the user's
repository layout, and a thread helper.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Generic, TypeVar, cast

from reference_loop._workspace.records import _Entry

# Attributes the workspace's own .gitattributes could set that would make the stored bytes differ
# from the file's bytes (eol conversion, filters, $Id$ expansion); info/attributes overrides them.
_BYTE_EXACT_ATTRIBUTES = "* -text -eol -ident -filter -working-tree-encoding\n"

# The private repository's whole config: user/system config is switched off by the environment.
# bigFileThreshold and the small pack windows let git stream a large blob (restore, diff) instead
# of holding it, or a whole mapped pack, in memory.
# splitIndex: each command rewrites only the entries that changed, not the whole index (writing
# and hashing the 2 MB index of a 20,000-file tree cost 6-12 ms per git command).
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
\tbigFileThreshold = 8m
\tpackedGitWindowSize = 8m
\tpackedGitLimit = 32m
\tuntrackedCache = false
\tsplitIndex = true
\tlooseCompression = {loose}
\tfsync = none
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

# Given on the command line of every git the workspace runs, whatever config a repository, the
# environment or an attempt holds: the settings under which git runs a program (a hook,
# core.fsmonitor, automatic maintenance and its pre-auto-gc hook) are switched off. The others
# that name a program (core.pager, diff.external, textconv and filter drivers, credential and
# ssh helpers, aliases) are never reached: git runs with --no-pager, diffs with --no-ext-diff
# --no-textconv, the private store's info/attributes unsets every filter, and no command the
# workspace runs touches the network or expands an alias.
_SAFE_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "gc.auto=0",
    "maintenance.auto=false",
)
# ...and in its environment: no system or global config, no system attributes, no prompt, no
# replacement objects.
_SAFE_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
}

_T = TypeVar("_T")
_SYMLINK = "120000"
_GITLINK = "160000"


_NO_GIT = "git is not installed or not on PATH; the workspace needs it to snapshot and restore"
# A changed file larger than this is named in the patch ("Binary files ... differ"), not inlined.
BIG_FILE_BYTES = 8 * 1024 * 1024
_PATCH_ARGS = ("--raw", "-z", "--no-abbrev", "--no-ext-diff", "--no-textconv", "-p", "--no-color")
_BULK_CHECKIN = "core.bigFileThreshold=1"
# From this many changed paths on, diff_and_restore writes a tree and restores beside the patch.
_RESTORE_BESIDE_PATCH = 256
_MALLOC_TUNABLES = "glibc.malloc.trim_threshold=268435456:glibc.malloc.mmap_threshold=268435456"
_CHUNK = 1 << 20
# Below this many bytes in all, the blobs a restore writes are read while the patch is made.
_PREFETCH_BYTES = 16 << 20
_TOP_DIRS = ("--show-toplevel", "--git-dir", "--git-common-dir")
# Config lines after which git, not the layout, says where a repository's work tree and
# objects are: a moved or bare work tree, included files, extensions (object format...).
_UNPLAIN_CONFIG = re.compile(
    rb"(?im)^\s*(?:worktree\b|\[\s*(?:include|extensions)|"
    rb"bare[ \t]*(?:$|=[ \t]*(?![ \t]|(?:false|no|off|0)[ \t]*(?:[#;].*)?$)))"
)
# Attributes under which git's checkout writes other bytes than the blob's into every file they
# name: CRLF line ends, $Id$ expanded, a smudge filter, another encoding (set, not "-ident").
# text, text=auto and eol=lf only normalize what is added: a file checked out under them is its
# blob's bytes, so the user's index is trusted as git trusts it.
_CONVERTING_ATTRIBUTE = re.compile(
    rb"(?m)(?:^|[ \t])(?:eol=crlf|ident|filter=\S+|working-tree-encoding=\S+)(?=[ \t\r]|$)"
)
_OBJECT_FORMAT = re.compile(rb"(?im)^\s*objectformat\s*=\s*\"?([^\s\"#;]*)")
# Config under which every text file is checked out with CRLF line ends (autocrlf=true, eol=crlf;
# autocrlf=input only normalizes what is added), or attributes come from elsewhere.
_CONVERTING_CONFIG = re.compile(
    rb"(?im)^\s*(?:autocrlf[ \t]*(?:$|=[ \t]*(?![ \t]|(?:false|no|off|0|input)[ \t]*(?:[#;].*)?$))"
    rb"|eol[ \t]*=[ \t]*\"?crlf\b|attributesfile\b)"
)
_PLACEHOLDER = ".reference-loop-nested-repository"
_EMPTY_BLOB = b"e69de29bb2d1d6434b8b29ae775a204e9942f391"
_ZERO_SHA = b"0" * 40
_ZERO_HEX = "0" * 40
# Pack windows for processes that read only headers or only blobs known to be small.
_WIDE_WINDOWS = ("core.packedGitWindowSize=1g", "core.packedGitLimit=8g")
_NESTED_FAILED = "does not have a commit checked out"
_EMBEDDED_WARNING = "adding embedded git repository"


class _InThread(Generic[_T]):
    """Run ``fn`` in a thread now; :meth:`result` waits and returns it (or raises its error)."""

    def __init__(self, fn: Callable[[], _T]) -> None:
        self._fn = fn
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def join(self) -> None:
        self._thread.join()

    def result(self) -> _T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return cast(_T, self._value)


def _plain_layout(root: str) -> tuple[str, str] | None:
    """(git dir, common dir) of the repository whose top is ``root``, read from the layout
    when it is the plain one: a ``.git`` directory or gitfile, owned by this user, whose
    config neither moves the work tree, makes it bare, includes other files nor names an
    extension. ``None`` leaves the question to ``git rev-parse``."""
    dotgit = os.path.join(root, ".git")
    try:
        st = os.lstat(dotgit)
        if stat.S_ISDIR(st.st_mode):
            gitdir = dotgit
        elif stat.S_ISREG(st.st_mode) and st.st_size < 4096:
            with open(dotgit, "rb") as fh:
                text = fh.read()
            target = text[8:].rstrip(b"\r\n") if text.startswith(b"gitdir: ") else b""
            if not target or b"\n" in target:
                return None
            gitdir = os.path.normpath(os.path.join(root, os.fsdecode(target)))
        else:
            return None
        if os.path.lexists(os.path.join(gitdir, "commondir")):
            return None  # a linked worktree
        with open(os.path.join(gitdir, "config"), "rb") as fh:
            config = fh.read()
        owner = os.geteuid()
        if not os.path.isfile(os.path.join(gitdir, "HEAD")) or any(
            os.stat(p).st_uid != owner for p in (root, gitdir)
        ):
            return None
    except OSError:
        return None
    if _UNPLAIN_CONFIG.search(config):
        return None
    return gitdir, gitdir


def _converting_attributes(path: str | bytes) -> bool:
    """Whether the attributes file at ``path`` (if any) sets an attribute under which a file
    checked out is not its blob's bytes (CRLF line ends, a filter, ``$Id$``, an encoding)."""
    try:
        with open(path, "rb") as fh:
            text = fh.read()
    except OSError:
        return False
    return _CONVERTING_ATTRIBUTE.search(text) is not None


def _other_object_format(common: str) -> bool:
    """Whether the repository's objects are not SHA-1 (``extensions.objectFormat``)."""
    try:
        with open(os.path.join(common, "config"), "rb") as fh:
            config = fh.read()
    except OSError:
        return False
    return any(value.lower() != b"sha1" for value in _OBJECT_FORMAT.findall(config))


def _user_converts(gitdir: str, common: str) -> bool:
    """Whether the user's git may have checked files out (or added them) converted: then a
    stat-clean entry's blob is not the file's bytes, and the user's index cannot be trusted.
    Reads the repository's, global and system config and attributes files (not the tree's
    ``.gitattributes``, which the first snapshot's pass over the directories finds)."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    configs = (
        os.path.join(common, "config"),
        os.path.join(home, ".gitconfig"),
        os.path.join(xdg, "git", "config"),
        "/etc/gitconfig",
    )
    for path in configs:
        try:
            with open(path, "rb") as fh:
                if _CONVERTING_CONFIG.search(fh.read()):
                    return True
        except OSError:
            continue
    attributes = (
        os.path.join(gitdir, "info", "attributes"),
        os.path.join(common, "info", "attributes"),
        os.path.join(xdg, "git", "attributes"),
        "/etc/gitattributes",
    )
    return any(_converting_attributes(path) for path in attributes)


def _config_args(config: Iterable[str]) -> list[str]:
    return [arg for item in config for arg in ("-c", item)]


def _largest(entry: _Entry, sizes: Mapping[str, int]) -> int:
    """The larger of the entry's two blob sizes (a gitlink's commit has none: 0)."""
    return max(sizes.get(entry.src_sha, 0), sizes.get(entry.dst_sha, 0))


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """Write ``data`` to a child's stdin and close it; a child that exited early is fine."""
    with contextlib.suppress(OSError):
        pipe.write(data)
    with contextlib.suppress(OSError):
        pipe.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _git_error(proc: subprocess.CompletedProcess[bytes]) -> str:
    msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    # git ends with a generic "fatal: adding files failed"; the cause is the first error.
    errors = [line for line in msg if line.startswith("error:")]
    return (errors or msg or [f"exit {proc.returncode}"])[0 if errors else -1]


def _cfg_path(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _split_z(data: bytes) -> list[str]:
    return [os.fsdecode(p) for p in data.split(b"\0") if p]


def _parse_raw(data: bytes) -> tuple[list[_Entry], int]:
    """``git diff --raw -z --no-abbrev`` records -> (entries, offset where the patch starts).

    Parsed by position, not by splitting on NUL: a patch of a "text" file may contain NULs.
    """
    entries, raw_end = _parse_raw_records(data)
    # The raw block's terminator before the patch.
    return entries, raw_end + 1 if data.startswith(b"\0", raw_end) else raw_end


def _parse_raw_records(data: bytes) -> tuple[list[_Entry], int]:
    entries: list[_Entry] = []
    pos = 0
    while data.startswith(b":", pos):
        end = data.index(b"\0", pos)
        src_mode, dst_mode, src_sha, dst_sha, status = data[pos + 1 : end].decode().split()
        pos = end + 1
        paths = []
        for _ in range(2 if status[0] in "RC" else 1):
            end = data.index(b"\0", pos)
            paths.append(os.fsdecode(data[pos:end]))
            pos = end + 1
        new_path = paths[1] if len(paths) == 2 else None
        entries.append(_Entry(status[0], src_mode, src_sha, paths[0], new_path, dst_mode, dst_sha))
    return entries, pos


def _merge_raw_patches(first: bytes, second: bytes) -> bytes:
    """Two ``--raw -z -p`` outputs as one: the raw records of both, then both patches."""
    _a, a_end = _parse_raw_records(first)
    _b, b_end = _parse_raw_records(second)
    _a, a_patch = _parse_raw(first)
    _b, b_patch = _parse_raw(second)
    return first[:a_end] + second[:b_end] + b"\0" + first[a_patch:] + second[b_patch:]


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
