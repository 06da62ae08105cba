"""Install receipts and the folder index: what chimera-cards wrote into an agent folder."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path

from chimera_cards._bundles.folderscan import (
    FolderRecord,
    Scan,
    hash_folder,
    read_receipt_bytes,
)
from chimera_cards._bundles.folderscan import find_skill_folders as _find_skill_folders
from chimera_cards._bundles.manifest import BundleFile, bundle_digest
from chimera_cards._util.atomic import write_atomic
from chimera_cards._util.records import asdict, record
from chimera_cards.errors import ChimeraError, UsageError

INDEX_NAME = ".chimera-installed.json"
RECEIPT_FORMAT = 1
TOOL = "chimera-cards"
STATES = ("ok", "modified", "revoked", "unknown", "missing", "unpinned")


class InstallError(ChimeraError):
    """A skill cannot be installed or removed as asked (exit 1)."""


class ForeignFolderError(InstallError):
    """The folder exists and this tool did not install it: it is left alone without ``force``."""


class NotInstalledError(InstallError):
    """Uninstall of a folder this tool did not install (or that is not there)."""


@record(frozen=True)
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


@record(frozen=True)
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
    forgets one. Callers writing many skills record them once at the end.

    Done holding the folder's lock, as ``folderlock.serialized`` would; loaded here, since
    ``check`` (which only reads receipts) starts up on this module.
    """
    from chimera_cards._install.folderlock import folder_lock

    with folder_lock(directory):
        _record_installs(Path(directory), changes)


def _record_installs(directory: Path, changes: Mapping[str, dict | None]) -> None:
    skills = read_index(directory)
    before = dict(skills)
    for name, entry in changes.items():
        if entry is None:
            skills.pop(name, None)
        else:
            skills[name] = entry
    if skills != before or not (directory / INDEX_NAME).exists():
        _write_index(directory, skills)
