"""Read skills out of a git repository (a local path or a URL) at a ref, with the system ``git``.

The repository is cloned bare into a temporary folder and read with ``ls-tree``/``cat-file``:
nothing is checked out, so no hook, filter, attribute or config of the repository ever runs, and
the bytes are exactly the committed blobs (the executable bit from the tree's mode). ``--ref``
may name a branch, a tag or a commit; the commit it resolves to is recorded as the origin, so a
later ``update`` can tell what changed. Each skill folder of the commit is checked with the bundle
rules on its own (submodules and symlinks out of it refused, limits checked from the tree's sizes
before any blob is read); files outside every skill are not read at all.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from chimera_cards._bundles.bundle import (
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_TOTAL_BYTES,
    SIDECAR_FILES,
    BundleError,
    BundleLimitError,
    FoundSkill,
    LinkError,
    bundle_from_files,
    check_path,
    skill_roots,
)
from chimera_cards._sources.marketplace import manifest_paths
from chimera_cards._util.urls import is_url
from chimera_cards.errors import ChimeraError, UsageError

DEFAULT_GIT_TIMEOUT = 120.0
_HEX_REF = re.compile(r"[0-9a-fA-F]{7,64}")
_GIT_URL_SCHEMES = ("git://", "ssh://", "git+ssh://", "git+https://", "git+http://", "git+file://")
# Never let a repository URL run a program (ext::) or prompt on the terminal.
_GIT_CONFIG = ("-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null")


class GitError(ChimeraError):
    """git could not clone or read the repository, or the ref does not exist."""


@dataclass(frozen=True)
class GitSnapshot:
    """The skills found at one commit of a git repository."""

    source: str  # the path or URL as given (with any git+ prefix removed)
    ref: str | None  # as given; None for the repository's default branch
    commit: str  # the commit the ref resolved to
    skills: list[FoundSkill]
    # Plugin manifests at that commit (path -> bytes): a marketplace says which skills it holds.
    manifests: dict[str, bytes] = field(default_factory=dict)

    @property
    def remote(self) -> bool:
        return is_url(self.source)


def is_git_source(source: str) -> bool:
    """True when ``source`` names a git repository rather than a folder, archive or card URL:
    a ``git://``/``ssh://``/``git+…://`` URL, a URL or path ending in ``.git``, ``user@host:path``,
    or a local bare repository.

    Args:
        source: what the user passed to ``import``.
    Returns:
        Whether to read it with git.
    """
    text = str(source)
    if text.startswith(_GIT_URL_SCHEMES) or text.lower().startswith("file://"):
        return True  # file:// is how npx (and git) name a repository on this machine
    if is_url(text):
        return text.split("?", 1)[0].rstrip("/").endswith(".git")
    if re.match(r"^[\w.-]+@[\w.-]+:", text):
        return True
    path = Path(text)
    if text.rstrip("/").endswith(".git") and path.is_dir():
        return True
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="",
        SSH_ASKPASS="",
        GIT_CONFIG_NOSYSTEM="1",
        LC_ALL="C",
    )
    return env


def _run(
    args: list[str], *, timeout: float, cwd: str | None = None, stdin: bytes | None = None
) -> bytes:
    """Run git in its own process group; on timeout kill the whole group (remote helpers too)."""
    # Loaded here: every import command loads this module (is_git_source), few run git.
    import signal
    import subprocess

    try:
        proc = subprocess.Popen(
            ["git", *_GIT_CONFIG, *args],
            cwd=cwd,
            env=_git_env(),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise GitError("git is not installed (needed to import from a repository)") from None
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise GitError(f"git {args[0]}: timed out after {timeout:g}s") from None
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    if proc.returncode != 0:
        raise GitError(f"git {args[0]} failed: {_git_message(err, proc.returncode)}")
    return out


def _git_message(err: bytes, code: int) -> str:
    """git's own message, every line of it (ssh's reason comes before git's "fatal:"), as one
    line: a failed clone says why, not only that it failed."""
    lines = []
    for line in err.decode("utf-8", "replace").splitlines():
        text = "".join(c if c.isprintable() else " " for c in line).strip()
        if text and text not in lines:
            lines.append(text)
    message = "; ".join(lines) or f"exit {code}"
    return message if len(message) <= 600 else message[:600] + " …"


def _clone_source(source: str) -> str:
    for prefix in ("git+ssh://", "git+https://", "git+http://", "git+file://"):
        if source.startswith(prefix):
            return source[len("git+") :]
    if not is_url(source) and not re.match(r"^[\w.-]+@[\w.-]+:", source):
        return str(Path(source).resolve())
    return source


def _check_ref(ref: str) -> None:
    if not ref or ref.startswith("-") or any(ord(c) < 0x21 for c in ref) or ".." in ref:
        raise UsageError(f"--ref {ref!r} is not a branch, tag or commit name")


def _resolve(repo: str, ref: str | None, timeout: float) -> str:
    spec = "HEAD" if ref is None or not _HEX_REF.fullmatch(ref) else ref
    out = _run(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{spec}^{{commit}}"],
        cwd=repo,
        timeout=timeout,
    )
    return out.decode().strip()


def _listing(repo: str, commit: str, timeout: float) -> list[tuple[str, str, str, int, bytes]]:
    """(mode, type, object id, size, raw path) of every entry of the commit's tree."""
    out = _run(["ls-tree", "-r", "-l", "-z", "--full-tree", commit], cwd=repo, timeout=timeout)
    rows = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, oid, size = meta.decode().split(None, 3)
        rows.append((mode, kind, oid, int(size) if size.strip().isdigit() else 0, path))
    return rows


def _cat_blobs(repo: str, oids: list[str], timeout: float) -> dict[str, bytes]:
    if not oids:
        return {}
    out = _run(
        ["cat-file", "--batch"],
        cwd=repo,
        timeout=timeout,
        stdin=("\n".join(oids) + "\n").encode(),
    )
    blobs: dict[str, bytes] = {}
    pos = 0
    for oid in oids:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode().split()
        if len(header) != 3 or header[1] != "blob":
            raise GitError(f"git cat-file: unexpected answer for {oid}: {' '.join(header)}")
        size = int(header[2])
        blobs[oid] = out[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1
    return blobs


_LINK = "120000"
_EXECUTABLE = "100755"


def _skill_entries(
    root: str, rows: list[tuple[str, str, str, int, str]], where: str
) -> list[tuple[str, str, str]]:
    """Check one skill's tree entries without reading a blob: (path inside, oid, git mode)."""
    cut = len(root) + 1 if root else 0
    picked: list[tuple[str, str, str]] = []
    total = 0
    for mode, kind, oid, size, path in rows:
        if root and not path.startswith(root + "/"):
            continue
        rel = path[cut:]
        check_path(rel)
        if kind == "commit":
            raise LinkError(f"{where}: {path} is a submodule (its files are not in this repo)")
        if size > MAX_FILE_BYTES:
            raise BundleLimitError(
                f"{path}: {size} bytes; one file may hold at most {MAX_FILE_BYTES}"
            )
        total += size
        picked.append((rel, oid, mode))
    if len(picked) > MAX_FILES:
        raise BundleLimitError(f"{where}: more than {MAX_FILES} files")
    if total > MAX_TOTAL_BYTES:
        raise BundleLimitError(f"{where}: more than {MAX_TOTAL_BYTES} bytes in total")
    return picked


def read_git(
    source: str, *, ref: str | None = None, timeout: float = DEFAULT_GIT_TIMEOUT
) -> GitSnapshot:
    """Clone ``source`` (bare, into a temporary folder removed afterwards) and read its skills.

    Args:
        source: a repository path or URL (``git+https://…`` accepted).
        ref: a branch, tag or commit; None for the default branch.
        timeout: seconds allowed for each git command.
    Returns:
        The resolved commit and one FoundSkill per skill folder in it.
    Raises:
        GitError: git failed (unreachable, no such ref, not a repository);
        UsageError: a ref that could be read as an option.
    """
    if ref is not None:
        _check_ref(ref)
    import shutil  # with tempfile: only for a repository, not every import
    import tempfile

    url = _clone_source(source)
    tmp = tempfile.mkdtemp(prefix="chimera-git-")
    try:
        repo = os.path.join(tmp, "repo.git")
        args = ["clone", "--bare", "--quiet", "--no-local"]
        if ref is None or not _HEX_REF.fullmatch(ref):
            # A branch or tag needs only its tip; a commit id needs the history to find it.
            args += ["--depth", "1"]
            if ref is not None:
                args += ["--branch", ref]
        _run([*args, "--", url, repo], timeout=timeout)
        try:
            commit = _resolve(repo, ref, timeout)
        except GitError:
            raise GitError(f"{source}: no branch, tag or commit {ref or 'HEAD'!r}") from None
        rows = []
        for mode, kind, oid, size, raw in _listing(repo, commit, timeout):
            try:
                path = raw.decode("utf-8")
            except UnicodeDecodeError:
                path = raw.decode("utf-8", "surrogateescape")
            rows.append((mode, kind, oid, size, path))
        where = f"{source}@{commit[:12]}"
        found: list[FoundSkill] = []
        wanted: dict[str, list[tuple[str, str, str]]] = {}
        for root in skill_roots(p for *_, p in rows):
            try:
                wanted[root] = _skill_entries(root, rows, f"{where}:{root}" if root else where)
            except BundleError as exc:
                found.append(FoundSkill(root, error=exc))
        named = set(manifest_paths(p for *_, p in rows))
        manifest_oids = {
            p: oid for mode, kind, oid, _, p in rows if p in named and mode in ("100644", "100755")
        }
        oids = {oid for v in wanted.values() for _, oid, _ in v} | set(manifest_oids.values())
        blobs = _cat_blobs(repo, sorted(oids), timeout)
        manifests = {path: blobs[oid] for path, oid in manifest_oids.items()}
        for root, picked in wanted.items():
            label = f"{where}:{root}" if root else where
            # a symlink's blob is its target: stored as a copy of that file of the skill
            links = {r: blobs[o].decode("utf-8", "replace") for r, o, m in picked if m == _LINK}
            files = {r: (blobs[o], m == _EXECUTABLE) for r, o, m in picked if m != _LINK}
            sidecar = files.get(SIDECAR_FILES[0])
            try:
                bundle = bundle_from_files(files, where=label, links=links)
                found.append(FoundSkill(root, bundle, sidecar=sidecar[0] if sidecar else None))
            except BundleError as exc:
                found.append(FoundSkill(root, error=exc))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    found.sort(key=lambda s: s.root.encode("utf-8", "surrogateescape"))
    return GitSnapshot(source=source, ref=ref, commit=commit, skills=found, manifests=manifests)
