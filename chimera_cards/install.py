"""Put approved skill bundles where agents read them, and notice when they change.

An installed skill is a folder ``DIR/<name>/`` holding the bundle's files byte for byte (with
their executable bits) plus a receipt, ``.chimera-install.json``, saying which bundle digest was
written, from which store, when. The receipt is a bundle sidecar (``bundle.SIDECAR_FILES``), so
hashing an installed folder gives back the bundle's digest. ``DIR/.chimera-installed.json`` lists
what this tool installed into ``DIR``, so a folder that was deleted is reported ``missing``.

Writing is atomic per skill: the files go into a hidden temp folder in the same ``DIR``, which
then takes the place of the old folder in one ``renameat2(RENAME_EXCHANGE)`` (where the kernel
lacks it, two renames, and the next run puts a stranded old copy back), so a crash leaves the old
copy or the new one, never a mix. A folder this tool did not install is never overwritten
without ``force``.

The first half of this module knows only files and folders (``write_skill``, ``scan_folder``,
``classify``: pure); the second half asks the store which bundle may be installed and what a
folder's bytes are (``install``, ``check``, ``plan_sync``/``apply_sync``), applying the gate's rule:
active, and approved under today's trust list and threshold (or a clean local import).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from pathlib import Path

from chimera_cards.atomic import write_atomic
from chimera_cards.bundle import (
    SKILL_FILE,
    Bundle,
    BundleDiff,
    BundleFile,
    bundle_digest,
    check_path,
    diff_bundles,
)
from chimera_cards.errors import ChimeraError, UsageError
from chimera_cards.folderscan import (
    RECEIPT_NAME,
    FolderRecord,
    Scan,
    hash_folder,
    idle_core,
    read_receipt_bytes,
    start_scan,
)
from chimera_cards.folderscan import find_skill_folders as _find_skill_folders
from chimera_cards.trust import (
    evaluate,
    evaluate_remembered,
    get_threshold,
    is_clean_path,
    trusted_keys,
)

__all__ = [
    "INDEX_NAME",
    "RECEIPT_NAME",
    "STATES",
    "AvailableSkill",
    "Candidate",
    "CheckReport",
    "FolderScan",
    "ForeignFolderError",
    "InstallError",
    "InstallResult",
    "NotApprovedError",
    "NotInstalledError",
    "Policy",
    "Receipt",
    "SkillState",
    "StoredSkill",
    "SyncAction",
    "apply_sync",
    "available_skills",
    "check",
    "check_name",
    "classify",
    "find_skill_folders",
    "install",
    "installable",
    "load_bundle",
    "load_bundles",
    "plan_sync",
    "read_index",
    "read_receipt",
    "record_installs",
    "recover",
    "remove_skill",
    "render_skills_xml",
    "scan_folder",
    "scan_folders",
    "stored_skills",
    "write_skill",
]

INDEX_NAME = ".chimera-installed.json"
RECEIPT_FORMAT = 1
TOOL = "chimera-cards"
STATES = ("ok", "modified", "revoked", "unknown", "missing")
# Hidden siblings this module makes in DIR while writing or removing a skill.
_TMP_MARK = ".chimera-tmp-"
_OLD_MARK = ".chimera-old-"


class InstallError(ChimeraError):
    """A skill cannot be installed or removed as asked (exit 1)."""


class ForeignFolderError(InstallError):
    """The folder exists and this tool did not install it: it is left alone without ``force``."""


class NotInstalledError(InstallError):
    """Uninstall of a folder this tool did not install (or that is not there)."""


@dataclass(frozen=True)
class Receipt:
    """What ``install`` wrote into a skill folder, about itself."""

    name: str
    digest: str  # the bundle digest written
    store: str  # the store it came from
    installed_at: str
    tool: str = TOOL
    format: int = RECEIPT_FORMAT

    def index_entry(self) -> dict:
        return {"digest": self.digest, "installed_at": self.installed_at}

    def to_bytes(self) -> bytes:
        return (json.dumps(asdict(self), indent=2, sort_keys=True) + "\n").encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes) -> Receipt | None:
        """The receipt in ``data``, or None when it is not one of ours (then the folder counts
        as not installed by this tool)."""
        try:
            value = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
        if not isinstance(value, dict) or value.get("tool") != TOOL:
            return None
        fields = ("name", "digest", "store", "installed_at")
        if not all(isinstance(value.get(k), str) for k in fields):
            return None
        return cls(*(value[k] for k in fields))


def utc_now() -> str:
    from datetime import UTC, datetime  # only when writing: check never needs it

    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_receipt(folder: str | os.PathLike) -> Receipt | None:
    """The receipt inside ``folder``, or None (no receipt, not a regular file, not ours).

    Args:
        folder: a skill folder.
    Returns:
        The Receipt, or None.
    """
    data = read_receipt_bytes(folder)
    return None if data is None else Receipt.from_bytes(data)


# -- reading a folder -------------------------------------------------------------------------


@dataclass(frozen=True)
class FolderScan:
    """What is on disk in one skill folder, as bundle files, and what cannot be a bundle file."""

    files: tuple[BundleFile, ...]
    problems: tuple[str, ...] = ()  # e.g. "scripts/x: symlink"; any problem means "modified"

    @cached_property
    def digest(self) -> str:
        return bundle_digest(self.files)


def scan_folder(folder: str | os.PathLike) -> FolderScan:
    """Hash every file of a skill folder the way the bundle manifest does, without refusing.

    A check must say what is wrong rather than stop at the first oddity, so links, special files
    and unreadable files become ``problems`` instead of exceptions. Ignored names and sidecars
    (``bundle.is_ignored``, the receipt included) are left out, as the bundle reader does.

    Args:
        folder: the skill folder.
    Returns:
        The files (sorted by path bytes) and problems found.
    """
    return _folder_scan(hash_folder(folder))


def _folder_scan(record: FolderRecord) -> FolderScan:
    files, problems, _ = record
    return FolderScan(tuple([BundleFile(*f) for f in files]), tuple(problems))


def scan_folders(folders: list[Path], *, parallel: bool | None = None) -> list[FolderScan]:
    """``scan_folder`` of each folder, in order; on a Linux machine with an idle core a forked
    child hashes part of them meanwhile (``folderscan.Scan``).

    Args:
        folders: skill folders.
        parallel: use a second process (True: whenever the system can fork; False: never;
            None: when there are many folders and a core is idle).
    Returns:
        One FolderScan per folder.
    """
    with Scan(folders, parallel) as scan:
        return [_folder_scan(record) for record in scan.result()]


def find_skill_folders(directory: str | os.PathLike) -> list[Path]:
    """The skill folders directly inside a skills directory, sorted by name, as
    ``folderscan.find_skill_folders`` finds them.

    Args:
        directory: e.g. ``.claude/skills``.
    Returns:
        The folders; none if ``directory`` does not exist.
    Raises:
        UsageError: it exists but cannot be listed.
    """
    try:
        return _find_skill_folders(directory)
    except OSError as exc:
        raise UsageError(f"{directory}: cannot read ({exc.strerror})") from None


# -- the index of what was installed into a directory ------------------------------------------


def read_index(directory: str | os.PathLike) -> dict[str, dict]:
    """``{name: {"digest": ..., "installed_at": ...}}`` this tool recorded for ``directory``.

    An unreadable or foreign index counts as empty: it only serves to report ``missing``.

    Args:
        directory: a skills directory.
    Returns:
        The recorded installs.
    """
    try:
        value = json.loads((Path(directory) / INDEX_NAME).read_bytes())
    except (OSError, ValueError):
        return {}
    skills = value.get("skills") if isinstance(value, dict) else None
    if not isinstance(skills, dict):
        return {}
    return {k: v for k, v in skills.items() if isinstance(v, dict) and "digest" in v}


def _write_index(directory: Path, skills: Mapping[str, dict]) -> None:
    data = {"tool": TOOL, "skills": {k: skills[k] for k in sorted(skills)}}
    write_atomic(directory / INDEX_NAME, (json.dumps(data, indent=2) + "\n").encode("utf-8"))


def record_installs(directory: str | os.PathLike, changes: Mapping[str, dict | None]) -> None:
    """Update the index of ``directory``: ``{name: entry}`` records an install, ``{name: None}``
    forgets one. Callers writing many skills record them once at the end."""
    directory = Path(directory)
    skills = read_index(directory)
    before = dict(skills)
    for name, entry in changes.items():
        if entry is None:
            skills.pop(name, None)
        else:
            skills[name] = entry
    if skills != before or not (directory / INDEX_NAME).exists():
        _write_index(directory, skills)


# -- writing and removing ---------------------------------------------------------------------


@contextmanager
def _disk_errors(what: str) -> Iterator[None]:
    """An OSError from the file system (a path through a file, no permission, a full disk) as
    one InstallError line."""
    try:
        yield
    except OSError as exc:
        raise InstallError(f"{what}: {exc.strerror or exc}") from None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    import ctypes  # only here: most runs never replace a folder

    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _rmtree(path: Path, *, ignore_errors: bool = False) -> None:
    import shutil  # loaded by the commands that write, not by check

    shutil.rmtree(path, ignore_errors=ignore_errors)


def _sibling(directory: Path, name: str, mark: str) -> Path:
    return directory / f".{name}{mark}{os.urandom(4).hex()}"


def _hidden(directory: Path) -> list[str]:
    """The names of the hidden entries of ``directory`` (where leftovers would be)."""
    try:
        with os.scandir(directory) as it:
            return [e.name for e in it if e.name.startswith(".")]
    except OSError:  # missing or not a folder: writing there reports it as one error line
        return []


def recover(directory: str | os.PathLike, name: str, hidden: Iterable[str] | None = None) -> None:
    """Finish what a crashed write or removal of ``name`` left behind.

    A stranded old copy (the process died between the two renames of the fallback swap) goes back
    in place when the folder is missing; temp folders are deleted.

    Args:
        directory: the skills directory.
        name: the skill folder's name.
        hidden: the directory's hidden entry names, when the caller listed them already (one
            listing for a batch of skills instead of one per skill).
    """
    directory = Path(directory)
    target = directory / name
    names = list(_hidden(directory) if hidden is None else hidden)
    for entry in names:
        if entry.startswith(f".{name}{_OLD_MARK}"):
            if not target.exists():
                os.rename(directory / entry, target)
            else:
                _rmtree(directory / entry, ignore_errors=True)
    for entry in names:
        if entry.startswith(f".{name}{_TMP_MARK}"):
            _rmtree(directory / entry, ignore_errors=True)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_files(root: Path, bundle: Bundle, receipt: Receipt, rehash: bool) -> None:
    # Plain strings and os calls: with thousands of small files the pathlib objects cost more
    # than the writes.
    base = os.fspath(root)
    os.mkdir(base, 0o755)
    made: set[str] = set()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    sha256 = hashlib.sha256
    for f in bundle.files:
        parts = check_path(f.path)  # the store's bundles were checked; a path is never trusted
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder not in made:
                os.mkdir(f"{base}/{folder}", 0o755)
                made.add(folder)
        data = bundle.contents[f.path]
        if len(data) != f.size or (rehash and sha256(data).hexdigest() != f.sha256):
            raise InstallError(f"{receipt.name}: {f.path} does not match its manifest entry")
        # 0o777 / 0o666 less the umask, as git and cp do.
        fd = os.open(f"{base}/{f.path}", flags, 0o777 if f.executable else 0o666)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    fd = os.open(f"{base}/{RECEIPT_NAME}", flags, 0o666)
    try:
        _write_all(fd, receipt.to_bytes())
    finally:
        os.close(fd)


def write_skill(
    directory: str | os.PathLike,
    bundle: Bundle,
    *,
    name: str,
    store: str,
    force: bool = False,
    now: str | None = None,
    record: bool = True,
    rehash: bool = True,
    hidden: Iterable[str] | None = None,
) -> Receipt:
    """Write ``bundle`` to ``directory/name/`` atomically, with its receipt, and record it.

    Args:
        directory: the skills directory (created if missing).
        bundle: the exact files to write (their bytes are re-hashed against the manifest).
        name: the folder name (the skill's name).
        store: the store path, for the receipt.
        force: replace a folder this tool did not install.
        now: the time to record (default: now, UTC).
        record: add it to the directory's index now (False: the caller calls
            ``record_installs`` once for a batch).
        rehash: hash every file against the manifest while writing (False only for a bundle
            just read with ``Store.get_bundle``, which re-hashed every file itself).
        hidden: the directory's hidden entries as listed before a batch (see ``recover``).
    Returns:
        The receipt written.
    Raises:
        ForeignFolderError: the folder exists without our receipt and ``force`` is false.
        InstallError: the target is not a folder, or a file does not match its manifest entry.
    """
    directory = Path(directory)
    check_name(name)
    with _disk_errors(f"cannot write {directory / name}"):
        directory.mkdir(parents=True, exist_ok=True)
        recover(directory, name, hidden)
        target = directory / name
        if target.is_symlink() or (target.exists() and not target.is_dir()):
            raise InstallError(f"{target}: exists and is not a folder; refusing to write there")
        if target.exists() and not force and read_receipt(target) is None:
            raise ForeignFolderError(
                f"{target}: exists and was not installed by chimera-cards; "
                "pass --force to replace it"
            )
        receipt = Receipt(
            name=name, digest=bundle.digest, store=store, installed_at=now or utc_now()
        )
        tmp = _sibling(directory, name, _TMP_MARK)
        try:
            _write_files(tmp, bundle, receipt, rehash)
            if not target.exists():
                os.rename(tmp, target)
            elif _exchange(tmp, target):
                _rmtree(tmp)  # now the old copy
            else:
                old = _sibling(directory, name, _OLD_MARK)
                os.rename(target, old)
                os.rename(tmp, target)
                _rmtree(old)
        except BaseException:
            _rmtree(tmp, ignore_errors=True)
            raise
    if record:
        record_installs(directory, {name: receipt.index_entry()})
    return receipt


def remove_skill(directory: str | os.PathLike, name: str, *, force: bool = False) -> Receipt | None:
    """Remove ``directory/name/`` if this tool installed it (moved aside in one rename first, so
    an agent never sees half a folder), and forget it in the index.

    Args:
        directory: the skills directory.
        name: the skill folder's name.
        force: remove it even without our receipt.
    Returns:
        The receipt the folder had (None when forced on a foreign folder, or already gone but
        still recorded).
    Raises:
        NotInstalledError: nothing there and nothing recorded, or a folder we did not install.
    """
    directory = Path(directory)
    check_name(name)
    with _disk_errors(f"cannot remove {directory / name}"):
        recover(directory, name)
        target = directory / name
        recorded = name in read_index(directory)
        if not target.exists() and not target.is_symlink():
            if not recorded:
                raise NotInstalledError(f"{target}: not installed")
            record_installs(directory, {name: None})
            return None
        receipt = read_receipt(target) if target.is_dir() and not target.is_symlink() else None
        if receipt is None and not force:
            raise NotInstalledError(
                f"{target}: was not installed by chimera-cards; pass --force to remove it"
            )
        if target.is_symlink() or not target.is_dir():
            target.unlink()
        else:
            old = _sibling(directory, name, _TMP_MARK)
            os.rename(target, old)
            _rmtree(old)
    record_installs(directory, {name: None})
    return receipt


def check_name(name: str) -> str:
    """Refuse a name that cannot be one folder directly inside the skills directory."""
    if not name or name.startswith(".") or "/" in name or "\\" in name or "\x00" in name:
        raise UsageError(f"{name!r} cannot be a skill folder name")
    return name


# -- what a folder's bytes mean ----------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A stored version whose bundle a folder may be compared with, and whether it is usable now.

    ``usable`` is the gate's answer today (active and approved under today's trust list, or a
    clean local import); ``why`` says why not when it is not.
    """

    name: str
    digest: str
    status: str
    usable: bool
    why: str = ""
    files: tuple[BundleFile, ...] = ()


@dataclass
class SkillState:
    """One line of ``check``: a skill folder and what its bytes are."""

    name: str
    path: str
    state: str  # one of STATES
    detail: str = ""
    digest: str | None = None  # of the folder as it is now
    expected: str | None = None  # the digest it was installed with / compared against
    installed: bool = False  # it has our receipt (or was recorded as installed)
    diff: BundleDiff | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    def to_dict(self) -> dict:
        data = asdict(self)
        data["diff"] = self.diff.to_dict() if self.diff is not None else None
        return data

    def line(self) -> str:
        text = f"{self.state:<8} {self.name}"
        return f"{text}  {self.detail}" if self.detail else text


def describe_diff(diff: BundleDiff, problems: Iterable[str] = ()) -> str:
    """What differs, file by file: ``changed x.py; added notes.txt; exec bit flipped run.sh``."""
    parts = []
    for label, paths in (
        ("changed", diff.changed),
        ("added", diff.added),
        ("removed", diff.removed),
        ("exec bit flipped", diff.mode_changed),
    ):
        if paths:
            parts.append(f"{label} {', '.join(paths)}")
    parts.extend(problems)
    return "; ".join(parts)


def classify(
    folder: Path,
    scan: FolderScan,
    receipt: Receipt | None,
    by_digest: Mapping[str, list[Candidate]],
    by_name: Mapping[str, Candidate | None],
) -> SkillState:
    """Decide what one folder's bytes are (pure: everything from the store is passed in).

    Args:
        folder: the skill folder.
        scan: its files as on disk.
        receipt: its receipt, if any.
        by_digest: stored versions for a bundle digest (the folder's, the receipt's).
        by_name: the version a name is compared with when the folder matches nothing (the
            usable one, else the newest).
    Returns:
        ok when the bytes are a usable bundle; revoked when they are a stored bundle that is not
        usable now; modified when they differ from what was installed (or from the stored
        bundle of that name), naming each file; unknown otherwise.
    """
    name = receipt.name if receipt else folder.name
    base = SkillState(
        name=name,
        path=str(folder),
        state="unknown",
        digest=scan.digest,
        installed=receipt is not None,
        expected=receipt.digest if receipt else None,
        problems=list(scan.problems),
    )
    if not scan.problems:
        found = by_digest.get(scan.digest, [])
        usable = [c for c in found if c.usable]
        if usable:
            pick = next((c for c in usable if c.name == name), usable[0])
            base.state, base.name, base.expected = "ok", pick.name, pick.digest
            return base
        if found:
            pick = next((c for c in found if c.name == name), found[0])
            base.state, base.name, base.expected = "revoked", pick.name, pick.digest
            base.detail = pick.why or f"version is {pick.status}"
            return base
    reference: Candidate | None = None
    if receipt is not None:
        reference = next(iter(by_digest.get(receipt.digest, [])), None)
    if reference is None:
        reference = by_name.get(name)
    if reference is None:
        base.detail = "not in the store" if not scan.problems else "; ".join(scan.problems)
        return base
    diff = diff_bundles(reference.files, scan.files)
    base.state, base.diff, base.expected = "modified", diff, reference.digest
    base.detail = describe_diff(diff, scan.problems) or "differs from the installed bundle"
    return base


def missing_state(directory: Path, name: str, entry: Mapping[str, object]) -> SkillState:
    """The line for a skill recorded as installed whose folder is gone."""
    digest = entry.get("digest")
    return SkillState(
        name=name,
        path=str(directory / name),
        state="missing",
        detail="recorded as installed; folder is gone",
        expected=digest if isinstance(digest, str) else None,
        installed=True,
    )


# -- against the store -------------------------------------------------------------------------


class NotApprovedError(InstallError):
    """The named skill has no version that may be used now (pending, rejected, retired, or its
    approvals no longer verify): it is not installed."""


@dataclass(frozen=True)
class Policy:
    """Whose approvals count when deciding what may be installed and what ``check`` calls ok.

    ``None`` fields mean the store's own trust list and threshold. A trust file given to
    ``check`` replaces both, and then only signed approvals count (a clean local import is not
    an approval anyone in the file made).
    """

    trusted: tuple | None = None  # tuple[TrustedKey, ...]
    threshold: int | None = None

    @property
    def from_file(self) -> bool:
        return self.trusted is not None


@dataclass(frozen=True)
class StoredSkill:
    """A stored version seen as a bundle, and whether it may be used now."""

    name: str
    version_id: int
    sha256: str
    digest: str
    status: str
    usable: bool
    why: str
    files: tuple[BundleFile, ...]

    def candidate(self) -> Candidate:
        return Candidate(self.name, self.digest, self.status, self.usable, self.why, self.files)


def _judge(store, versions: list, policy: Policy) -> tuple[list[tuple[bool, str]], dict]:
    """The gate's rule for each version, without re-reading the store's copy of its files.

    Installing re-reads and re-hashes them (``load_bundle``); checking compares a folder's own
    bytes with the manifest, so what matters there is only whether the version is active and its
    statements, over exactly that digest, verify under ``policy`` now. ``verify`` covers the
    store's copy. Under the store's own trust list the verdicts come through the store's memo
    (``trust.evaluate_remembered``); a trust file's keys are always checked afresh, since the
    point of giving one is not to take the store's word.

    Returns:
        ((usable, why) per version; new memo rows for ``Store.remember_verdicts``).
    """
    trusted = list(policy.trusted) if policy.trusted is not None else trusted_keys(store)
    threshold = policy.threshold if policy.threshold is not None else get_threshold(store)
    active = [v for v in versions if v.status == "active"]
    signed = store.envelopes_of(v.sha256 for v in active)
    items = [(v.name, v.sha256, signed.get(v.sha256, [])) for v in active]
    fresh: dict[str, str] = {}
    if policy.from_file:
        verdicts = [
            evaluate(envs, trusted, name=name, sha256=sha, threshold=threshold)
            for name, sha, envs in items
        ]
    else:
        verdicts, fresh = evaluate_remembered(store, items, trusted, threshold)
    by_id = {v.id: verdict for v, verdict in zip(active, verdicts, strict=True)}
    who = "a reviewer in the trust file" if policy.from_file else "a trusted reviewer"
    keys = "keys in the trust file" if policy.from_file else "trusted reviewers"
    answers = []
    for version in versions:
        verdict = by_id.get(version.id)
        if verdict is None:
            why = f"{version.status}: {version.reason}" if version.reason else version.status
            answers.append((False, why))
        elif verdict.rejected:
            answers.append((False, f"rejected by {who}"))
        elif verdict.approved or (
            not policy.from_file
            and is_clean_path(version.origin, version.final_url, version.provenance)
        ):
            answers.append((True, ""))
        else:
            answers.append(
                (
                    False,
                    f"{len(verdict.approvers)} of {threshold} required approvals by {keys} verify",
                )
            )
    return answers, fresh


def stored_skills(
    store,
    policy: Policy = Policy(),
    names: Iterable[str] | None = None,
    digests: Iterable[str] = (),
    *,
    manifests: bool = True,
) -> list[StoredSkill]:
    """Stored versions as bundle manifests, with the gate's answer under ``policy``.

    Args:
        store: an open Store.
        policy: whose approvals count (default: the store's trust list and threshold).
        names: the versions of these names (default: every version).
        digests: and the versions with these bundle digests, whatever their name.
        manifests: read each version's file list (False: ``files`` is empty, for a caller
            that reads only the few it needs).
    Returns:
        One StoredSkill per version whose bundle is stored, oldest first.
    """
    with store.snapshot():
        if names is None:
            chosen = {v.id: v for v in store.versions(order="id")}
            for v in store.versions_matching((), digests, details=False):
                chosen.setdefault(v.id, v)
            versions = [chosen[k] for k in sorted(chosen)]
        else:
            versions = store.versions_matching(names, digests, details=False)
        wanted = (v.digest for v in versions)
        files = (
            store.bundle_files_of(wanted)
            if manifests
            else dict.fromkeys(store.stored_bundles(wanted), ())
        )
        versions = [v for v in versions if v.digest in files]
        answers, fresh = _judge(store, versions, policy)
    # Remembered after the read snapshot, in a write of its own that never waits.
    store.remember_verdicts(fresh)
    return [
        StoredSkill(v.name, v.id, v.sha256, v.digest, v.status, usable, why, tuple(files[v.digest]))
        for v, (usable, why) in zip(versions, answers, strict=True)
    ]


def load_bundle(store, skill: StoredSkill) -> Bundle:
    """The exact files of a stored version, every one re-hashed against the manifest.

    Raises:
        TamperedBlobError: the store's copy no longer matches (run ``verify``).
    """
    bundle = store.get_bundle(skill.version_id)
    if bundle.digest != skill.digest:
        raise InstallError(f"{skill.name}: stored bundle does not match its digest")
    return bundle


def load_bundles(store, skills: Sequence[StoredSkill]) -> list[Bundle]:
    """``load_bundle`` of each skill, the store read in a few queries for any number.

    Raises:
        TamperedBlobError: a store's copy no longer matches (run ``verify``).
    """
    versions = {
        v.id: v for v in store.versions_matching({s.name for s in skills}, (), details=False)
    }
    if any(s.version_id not in versions for s in skills):  # removed meanwhile: one by one
        return [load_bundle(store, s) for s in skills]
    bundles = store.get_bundles([versions[s.version_id] for s in skills])
    for skill, bundle in zip(skills, bundles, strict=True):
        if bundle.digest != skill.digest:
            raise InstallError(f"{skill.name}: stored bundle does not match its digest")
    return bundles


def installable(skills: Iterable[StoredSkill], name: str, digest: str | None = None) -> StoredSkill:
    """The version of ``name`` to install: the usable one (or the one with ``digest``).

    Raises:
        NotApprovedError: no usable version; the message names the newest one and why.
    """
    mine = [s for s in skills if s.name == name]
    if not mine:
        raise NotApprovedError(f"no skill named {name!r} in the store")
    if digest is not None:
        # A lockfile pins the bundle digest; older lockfiles pinned SKILL.md's SHA-256.
        pinned = [s for s in mine if digest in (s.digest, s.sha256)]
        if not pinned:
            raise NotApprovedError(f"{name}: no stored version has bundle digest {digest[:12]}")
        mine = pinned
    usable = [s for s in mine if s.usable]
    if usable:
        return usable[-1]
    newest = mine[-1]
    raise NotApprovedError(
        f"{name} {newest.digest[:12]} is {newest.status}, not approved for use"
        + (f" ({newest.why})" if newest.why and newest.why != f"status is {newest.status}" else "")
        + "; review and approve it first"
    )


@dataclass
class InstallResult:
    """What ``install`` did with one name, and where."""

    name: str
    digest: str
    path: str
    action: str  # "installed" | "replaced" | "unchanged"

    def to_dict(self) -> dict:
        return asdict(self)


def install(
    store, names: Iterable[str], directory: str | os.PathLike, *, force: bool = False
) -> list[InstallResult]:
    """Install the approved bundle of each name into ``directory/<name>/``.

    Every name is resolved before anything is written, so a refused name leaves the directory
    untouched. A folder already holding exactly that bundle (with our receipt) is left as is.

    Args:
        store: an open Store.
        names: skill names.
        directory: the skills directory (e.g. ``.claude/skills``).
        force: replace folders this tool did not install.
    Returns:
        One InstallResult per name.
    Raises:
        NotApprovedError: a name has no usable version.
        ForeignFolderError: a folder is in the way and ``force`` is false.
    """
    directory = Path(directory)
    names = list(dict.fromkeys(names))
    for name in names:
        check_name(name)
    skills = stored_skills(store, names=names, manifests=False)  # load_bundle reads each one
    chosen = [installable(skills, name) for name in names]
    bundles = load_bundles(store, chosen)
    for skill in chosen:
        target = directory / skill.name
        if target.exists() and not force and read_receipt(target) is None:
            raise ForeignFolderError(
                f"{target}: exists and was not installed by chimera-cards; "
                "pass --force to replace it"
            )
    jobs = list(zip(chosen, bundles, strict=True))
    store_path = str(store.path)
    hidden = _hidden(directory)  # leftovers of a crashed run are there before this one starts
    done: dict[int, tuple[str, dict | None]] = {}
    mine = list(range(len(jobs)))
    child = None
    if len(jobs) >= _FORK_MIN_SKILLS and sys.platform.startswith("linux") and idle_core():
        half = len(jobs) // 2
        child = _Writer(jobs, mine[half:], directory, store_path, force, hidden)
        mine = mine[:half]
    try:
        for index in mine:
            done[index] = _install_one(directory, *jobs[index], store_path, force, hidden)
        if child is not None:
            done.update(child.collect())
            child = None
            # What the child did not finish (it met an error, or died) is done here, so an error
            # is raised from this process exactly as it would be without the child.
            for index in range(len(jobs)):
                if index not in done:
                    done[index] = _install_one(directory, *jobs[index], store_path, force, hidden)
    finally:
        if child is not None:  # this process failed first: what the child wrote is kept
            done.update(child.collect())
        written = {
            jobs[index][0].name: entry
            for index, (_, entry) in sorted(done.items())
            if entry is not None
        }
        if written:  # what was written is recorded even if a later skill failed
            record_installs(directory, written)
    return [
        InstallResult(skill.name, bundle.digest, str(directory / skill.name), done[index][0])
        for index, (skill, bundle) in enumerate(jobs)
    ]


# From this many skills on, with an idle core, a forked child writes half of them.
_FORK_MIN_SKILLS = 32


def _install_one(
    directory: Path, skill: StoredSkill, bundle: Bundle, store: str, force: bool, hidden: list
) -> tuple[str, dict | None]:
    """Write one chosen bundle (unless exactly it is there): (action, its index entry or None)."""
    target = directory / skill.name
    receipt = read_receipt(target) if target.is_dir() else None
    if receipt is not None and scan_folder(target).digest == bundle.digest:
        return "unchanged", None
    action = "replaced" if target.exists() else "installed"
    receipt = write_skill(
        directory,
        bundle,
        name=skill.name,
        store=store,
        force=force,
        record=False,
        rehash=False,  # load_bundle re-hashed every file
        hidden=hidden,
    )
    return action, receipt.index_entry()


class _Writer:
    """A forked child installing some of the chosen skills while this process does the others.

    Writing thousands of small files is system-call work that a second core halves; the folders
    are distinct and each is written atomically, as in one process. The child touches neither the
    store nor the index: it reports each skill it finished through a pipe, as soon as it is done,
    and stops at its first error (this process then does the rest, and reports that error). It
    leaves through ``os._exit``.
    """

    def __init__(
        self,
        jobs: list[tuple[StoredSkill, Bundle]],
        indices: list[int],
        directory: Path,
        store: str,
        force: bool,
        hidden: list,
    ) -> None:
        import marshal  # a format for this pipe between two copies of one program

        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read_end)
                for index in indices:
                    found = _install_one(directory, *jobs[index], store, force, hidden)
                    frame = marshal.dumps((index, *found))
                    _write_all(write_end, len(frame).to_bytes(4, "little") + frame)
            finally:
                os._exit(0)
        os.close(write_end)
        self._pid, self._pipe = pid, read_end

    def collect(self) -> dict[int, tuple[str, dict | None]]:
        """Wait for the child; each skill it reported as finished."""
        import marshal

        try:
            with os.fdopen(self._pipe, "rb") as pipe:
                data = pipe.read()
        finally:
            os.waitpid(self._pid, 0)
        finished: dict[int, tuple[str, dict | None]] = {}
        at = 0
        while at + 4 <= len(data):  # a frame cut short (the child was killed) is left out
            size = int.from_bytes(data[at : at + 4], "little")
            if at + 4 + size > len(data):
                break
            index, action, entry = marshal.loads(data[at + 4 : at + 4 + size])
            finished[index] = (action, entry)
            at += 4 + size
        return finished


@dataclass
class CheckReport:
    """``check``'s answer: one state per skill folder (and per missing install)."""

    states: list[SkillState]

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.states)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "skills": [s.to_dict() for s in self.states]}


def _by_name(skills: list[StoredSkill]) -> dict[str, Candidate]:
    out: dict[str, Candidate] = {}
    for skill in skills:  # oldest first: a later usable version wins, else the newest
        if skill.usable or skill.name not in out or not out[skill.name].usable:
            out[skill.name] = skill.candidate()
    return out


def check(
    store,
    directories: Iterable[str | os.PathLike],
    policy: Policy = Policy(),
    *,
    scan: Scan | None = None,
) -> CheckReport:
    """One state per skill folder in each directory, plus ``missing`` for recorded installs
    whose folder is gone.

    Args:
        store: an open Store.
        directories: skills directories (e.g. ``.claude/skills``).
        policy: whose approvals count (default: the store's trust list and threshold).
        scan: ``folderscan.start_scan(directories)``, when the caller started hashing early
            (it is finished and closed here).
    Returns:
        The report; ``ok`` only when every state is ok.
    Raises:
        UsageError: a directory exists but cannot be listed.
    """
    started = scan if scan is not None else start_scan(list(directories))
    with started:
        if started.unreadable is not None:
            directory, exc = started.unreadable
            raise UsageError(f"{directory}: cannot read ({exc.strerror})")
        records = started.result()
    # The receipt was read with the folder's files; None when there is none or it is not ours.
    scans = iter(
        [(_folder_scan(r), None if r[2] is None else Receipt.from_bytes(r[2])) for r in records]
    )
    found = [(d, [(f, *next(scans)) for f in folders]) for d, folders in started.listed]
    names = {f.name for _, folders in found for f, _, _ in folders}
    names |= {r.name for _, folders in found for _, _, r in folders if r is not None}
    digests = {scan.digest for _, folders in found for _, scan, _ in folders}
    digests |= {r.digest for _, folders in found for _, _, r in folders if r is not None}
    skills = stored_skills(store, policy, names, digests, manifests=False)
    states = _classify_all(found, skills)
    # Only a folder that is no stored bundle is compared file by file with the bundle it should
    # be: only those manifests are read (and the folders judged again, now with them).
    needed = {s.expected for s in states if s.state == "modified" and s.expected}
    if needed:
        manifests = store.bundle_files_of(needed)
        skills = [
            replace(s, files=tuple(manifests[s.digest])) if s.digest in manifests else s
            for s in skills
        ]
        states = _classify_all(found, skills)
    return CheckReport(states)


def _classify_all(found: list, skills: list[StoredSkill]) -> list[SkillState]:
    by_digest: dict[str, list[Candidate]] = {}
    for skill in skills:
        by_digest.setdefault(skill.digest, []).append(skill.candidate())
    by_name = _by_name(skills)
    states = []
    for directory, folders in found:
        seen = set()
        for folder, scan, receipt in folders:
            seen.add(folder.name)
            states.append(classify(folder, scan, receipt, by_digest, by_name))
        for name, entry in sorted(read_index(directory).items()):
            if name not in seen:
                states.append(missing_state(directory, name, entry))
    return states


@dataclass
class SyncAction:
    """One line of ``sync``'s plan: what to do with one skill, and why."""

    name: str
    action: str  # "install" | "replace" | "remove" | "keep" | "skip"
    reason: str = ""
    digest: str | None = None  # the bundle to write (install/replace)

    def to_dict(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        text = f"{self.action:<8} {self.name}"
        if self.digest and self.action in ("install", "replace"):
            text += f" {self.digest[:12]}"
        return f"{text}  {self.reason}" if self.reason else text


def plan_sync(
    store,
    directory: str | os.PathLike,
    names: Iterable[str] | None = None,
    pins: Mapping[str, str] | None = None,
) -> list[SyncAction]:
    """What ``sync`` would do to make ``directory`` hold exactly the approved set.

    The set is ``names`` (their usable versions) or ``pins`` (name -> bundle digest, from a
    lockfile), else every usable skill in the store. Folders this tool did not install are
    never touched; folders it installed that are no longer usable are removed.

    Args:
        store: an open Store.
        directory: the skills directory.
        names: the skills wanted.
        pins: the exact bundles wanted (a lockfile).
    Returns:
        One action per name involved, sorted by name.
    """
    directory = Path(directory)
    skills = stored_skills(store)
    if pins is not None:
        wanted: dict[str, str | None] = dict(pins)
    elif names is not None:
        wanted = {check_name(n): None for n in names}
    else:
        wanted = {s.name: None for s in skills if s.usable}
    report = check(store, [directory])
    present = {s.path: s for s in report.states}
    actions: dict[str, SyncAction] = {}
    for name, digest in wanted.items():
        target = directory / name
        state = present.get(str(target))
        try:
            skill = installable(skills, name, digest)
        except NotApprovedError as exc:
            if state is not None and state.installed and state.state != "missing":
                actions[name] = SyncAction(name, "remove", f"not usable: {exc}")
            else:
                actions[name] = SyncAction(name, "skip", str(exc))
            continue
        if state is None or state.state == "missing":
            actions[name] = SyncAction(name, "install", "", skill.digest)
        elif not state.installed:
            actions[name] = SyncAction(name, "skip", "folder was not installed by chimera-cards")
        elif state.state == "ok" and state.digest == skill.digest:
            actions[name] = SyncAction(name, "keep", "", skill.digest)
        else:
            why = "upgraded" if state.state in ("ok", "revoked") else state.state
            actions[name] = SyncAction(name, "replace", why, skill.digest)
    for state in report.states:
        if state.name in actions or Path(state.path).name in actions:
            continue
        if state.installed and state.state == "revoked":
            actions[state.name] = SyncAction(state.name, "remove", f"revoked: {state.detail}")
        elif state.installed and state.state == "missing":
            actions[state.name] = SyncAction(state.name, "remove", "folder is gone; forget it")
    return [actions[n] for n in sorted(actions)]


def apply_sync(store, directory: str | os.PathLike, plan: Iterable[SyncAction]) -> list[SyncAction]:
    """Carry out a plan from ``plan_sync`` (installs first, then removals).

    Returns:
        The actions done (keep/skip included, as planned).
    """
    directory = Path(directory)
    plan = list(plan)
    skills = stored_skills(store)
    written: dict[str, dict] = {}
    hidden = _hidden(directory)
    try:
        for action in plan:
            if action.action in ("install", "replace"):
                skill = installable(skills, action.name, action.digest)
                bundle = load_bundle(store, skill)
                receipt = write_skill(
                    directory,
                    bundle,
                    name=action.name,
                    store=str(store.path),
                    record=False,
                    rehash=False,  # load_bundle re-hashed every file
                    hidden=hidden,
                )
                written[action.name] = receipt.index_entry()
    finally:
        if written:
            record_installs(directory, written)
    for action in plan:
        if action.action == "remove":
            remove_skill(directory, action.name)
    return plan


# -- for agents that take a system prompt ------------------------------------------------------


@dataclass(frozen=True)
class AvailableSkill:
    """An installed skill that ``check`` calls ok, as ``<available_skills>`` lists it."""

    name: str
    description: str
    location: str  # the installed SKILL.md, absolute

    def to_dict(self) -> dict:
        return asdict(self)


def available_skills(
    store, names: Iterable[str], directory: str | os.PathLike
) -> tuple[list[AvailableSkill], list[str]]:
    """The skills among ``names`` installed in ``directory`` with bytes ``check`` calls ok.

    An agent told about a skill reads its ``SKILL.md`` from the location given, so only a
    folder whose bytes are the approved bundle is offered.

    Args:
        store: an open Store.
        names: matched skill names, best first.
        directory: where they should be installed.
    Returns:
        (the installed skills in the order of ``names``, the names that are not installed ok).
    """
    from chimera_cards.card import CardParseError, parse_card  # Markdown and YAML: only here

    directory = Path(directory)
    ok = {s.name: s for s in check(store, [directory]).states if s.ok}
    found, absent = [], []
    for name in names:
        state = ok.get(name)
        if state is None:
            absent.append(name)
            continue
        location = (Path(state.path) / SKILL_FILE).absolute()
        try:
            card = parse_card(location.read_bytes(), path=str(location))
        except (OSError, CardParseError):
            absent.append(name)
            continue
        description = card.description if isinstance(card.description, str) else ""
        found.append(AvailableSkill(name, description, str(location)))
    return found, absent


def render_skills_xml(skills: Iterable[AvailableSkill]) -> str:
    """The Agent Skills ``<available_skills>`` block (the layout ``skills-ref to-prompt``
    prints), every value escaped so a description cannot close an element."""
    import html

    lines = ["<available_skills>"]
    for skill in skills:
        lines.append("<skill>")
        for tag, value in (
            ("name", skill.name),
            ("description", skill.description),
            ("location", skill.location),
        ):
            lines += [f"<{tag}>", html.escape(value, quote=True), f"</{tag}>"]
        lines.append("</skill>")
    lines.append("</available_skills>")
    return "\n".join(lines)
