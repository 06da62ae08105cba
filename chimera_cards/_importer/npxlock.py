"""``skills-lock.json``, the lock file ``npx skills add`` keeps in a project, read and written.

Its shape (npx skills 1.7.4): ``{"version": 1, "skills": {NAME: ENTRY}}`` with names sorted and
two-space JSON, where ENTRY holds ``source`` (``owner/repo``, a URL or a local path relative to
the lock file), ``sourceType`` (``github``, ``gitlab``, ``git``, ``local``, ``well-known``, ...),
optionally ``sourceUrl``, ``ref`` and ``skillPath`` (the SKILL.md inside the source), and
``computedHash`` (``digests.npx_hash`` of the skill's files). npx reads entries it does not know
the keys of as they are, so ``write_npx_lock`` adds ours (``chimeraDigest``) beside its own.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from chimera_cards._bundles.digests import npx_hash
from chimera_cards._util.atomic import write_atomic
from chimera_cards.errors import UsageError

NPX_LOCK_NAME = "skills-lock.json"
NPX_LOCK_VERSION = 1
# npx's user-wide lock (``npx skills add --global``): ``~/.agents/.skill-lock.json``, or
# ``$XDG_STATE_HOME/skills/.skill-lock.json``; version 3, its hash is ``skillFolderHash`` (npx's
# hash of the folder, or for a GitHub source the git tree SHA-1 of the skill's folder).
GLOBAL_NPX_LOCK_NAME = ".skill-lock.json"
GLOBAL_NPX_LOCK_VERSION = 3
_HEX40 = re.compile(r"[0-9a-f]{40}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
# Source kinds whose bytes came from somewhere else than this machine: adopted versions of them
# are held for review (tainted), as an import from the network is.
LOCAL_SOURCE_TYPES = frozenset({"local"})


class NpxLockError(UsageError):
    """A ``skills-lock.json`` that cannot be read as npx writes it (exit 2)."""


@dataclass(frozen=True)
class NpxLockEntry:
    """One skill of a ``skills-lock.json``."""

    name: str
    source: str
    source_type: str
    computed_hash: str | None  # None: npx recorded none (e.g. a failed hash)
    source_url: str | None = None
    ref: str | None = None
    skill_path: str | None = None
    chimera_digest: str | None = None  # our bundle digest, where ``lock --format npx`` wrote it
    extra: dict = field(default_factory=dict, compare=False)  # keys we do not interpret
    tree_sha: str | None = None  # the global lock's git tree SHA-1 of a GitHub skill's folder

    @property
    def remote(self) -> bool:
        return self.source_type not in LOCAL_SOURCE_TYPES

    def origin(self) -> dict:
        """How npx says it got the skill, as a version's recorded source."""
        data = {"kind": "npx", "source": self.source, "sourceType": self.source_type}
        for key, value in (("sourceUrl", self.source_url), ("ref", self.ref)):
            if value:
                data[key] = value
        if self.skill_path:
            data["skillPath"] = self.skill_path
        if self.computed_hash:
            data["computedHash"] = self.computed_hash
        return data

    def upstream(self, root: str | os.PathLike | None) -> dict | None:
        """Where npx fetched the skill from, as ``update`` fetches it again: ``source`` (what
        ``import_source`` takes), ``ref``, ``path`` (the skill's folder inside the source, when
        npx recorded it), ``skill`` (its name) and ``taint`` (it comes from elsewhere).

        Args:
            root: the folder the lock's relative paths start from (the project).
        Returns:
            That, or None when npx recorded nothing this can fetch again.
        """
        folder = posixpath.dirname(self.skill_path) if self.skill_path else None
        base = Path(root) if root is not None else Path.cwd()
        kind = self.source_type
        if kind == "local":
            where = Path(self.source)
            where = where if where.is_absolute() else base / where
            source, taint = os.path.normpath(where), False
        elif kind == "node_modules":
            # npx sync: a package installed in the project's node_modules (from a registry).
            source, taint = os.path.normpath(base / "node_modules" / self.source), True
        elif kind in ("github", "gitlab", "git", "well-known"):
            source, taint = self.source_url or self.source, True
        else:
            return None
        if kind in ("local", "node_modules") and folder:
            source, folder = os.path.join(source, folder), None  # the skill's own folder
        up = {"sourceType": kind, "source": source, "skill": self.name, "taint": taint}
        if self.ref:
            up["ref"] = self.ref
        if folder:
            up["path"] = folder
        return up

    def to_json(self, digest: str | None = None) -> dict:
        data: dict = dict(self.extra)
        data["source"] = self.source
        if self.source_url:
            data["sourceUrl"] = self.source_url
        if self.ref:
            data["ref"] = self.ref
        data["sourceType"] = self.source_type
        if self.skill_path:
            data["skillPath"] = self.skill_path
        if self.computed_hash:
            data["computedHash"] = self.computed_hash
        if digest:
            data["chimeraDigest"] = digest
        return data


def is_npx_lock(path: str | os.PathLike) -> bool:
    """Whether ``path`` names an npx lock file (by its JSON shape, or its name when unreadable)."""
    try:
        value = json.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        return Path(path).name == NPX_LOCK_NAME
    return isinstance(value, dict) and isinstance(value.get("skills"), dict) and "version" in value


def global_npx_lock_path(env: Mapping[str, str] | None = None) -> Path:
    """Where npx keeps its user-wide lock: ``$XDG_STATE_HOME/skills/.skill-lock.json`` when that
    variable is set, else ``~/.agents/.skill-lock.json``."""
    seen = os.environ if env is None else env
    state = seen.get("XDG_STATE_HOME")
    if state:
        return Path(state) / "skills" / GLOBAL_NPX_LOCK_NAME
    home = seen.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".agents" / GLOBAL_NPX_LOCK_NAME


def read_npx_lock(path: str | os.PathLike) -> dict[str, NpxLockEntry]:
    """The entries of a ``skills-lock.json`` (version 1), or of npx's user-wide
    ``.skill-lock.json`` (version 3, where the hash is ``skillFolderHash``), by name.

    Args:
        path: the lock file.
    Returns:
        name -> entry, in the file's order.
    Raises:
        NpxLockError: unreadable, not JSON, not npx's shape, a version this does not know, an
            entry without a source or with a hash that is not 64 hex digits.
    """
    where = str(path)
    try:
        value = json.loads(Path(path).read_bytes())
    except OSError as exc:
        raise NpxLockError(f"{where}: cannot read ({exc.strerror})") from None
    except ValueError as exc:
        raise NpxLockError(f"{where}: not JSON ({exc})") from None
    if not isinstance(value, dict) or not isinstance(value.get("skills"), dict):
        raise NpxLockError(f'{where}: not a skills-lock.json (no "skills" object)')
    version = value.get("version")
    if version not in (NPX_LOCK_VERSION, GLOBAL_NPX_LOCK_VERSION) or isinstance(version, bool):
        raise NpxLockError(
            f"{where}: npx lock version {version!r}; this reads version {NPX_LOCK_VERSION} "
            f"(skills-lock.json) and {GLOBAL_NPX_LOCK_VERSION} (the user-wide .skill-lock.json)"
        )
    hash_key = "computedHash" if version == NPX_LOCK_VERSION else "skillFolderHash"
    entries: dict[str, NpxLockEntry] = {}
    for name, raw in value["skills"].items():
        if not isinstance(raw, dict) or not isinstance(raw.get("source"), str):
            raise NpxLockError(f"{where}: skill {name!r} has no source")
        computed = raw.get(hash_key)
        tree = None
        if version == GLOBAL_NPX_LOCK_VERSION and isinstance(computed, str):
            # "" when npx could not hash it; 40 hex: a git tree SHA-1 (a GitHub source).
            if _HEX40.fullmatch(computed.lower()):
                tree = computed.lower()
            computed = None if tree is not None or not computed else computed
        if computed is not None and not (isinstance(computed, str) and _HEX64.fullmatch(computed)):
            raise NpxLockError(f"{where}: skill {name!r}: {hash_key} is not 64 hex digits")
        known = {"source", "sourceType", "sourceUrl", "ref", "skillPath", hash_key}
        entries[name] = NpxLockEntry(
            name=name,
            source=raw["source"],
            source_type=str(raw.get("sourceType") or "unknown"),
            computed_hash=computed or None,
            source_url=_text(raw.get("sourceUrl")),
            ref=_text(raw.get("ref")),
            skill_path=_text(raw.get("skillPath")),
            chimera_digest=_hex(raw.get("chimeraDigest")),
            extra={k: v for k, v in raw.items() if k not in known and k != "chimeraDigest"},
            tree_sha=tree,
        )
    return entries


def _hex(value: object) -> str | None:
    return value.lower() if isinstance(value, str) and _HEX64.fullmatch(value.lower()) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def format_npx_lock(entries: Iterable[tuple[NpxLockEntry, str | None]]) -> bytes:
    """A ``skills-lock.json`` as npx writes it: version 1, names sorted, two-space JSON.

    Args:
        entries: (entry, our bundle digest or None) per skill.
    Returns:
        The file's bytes.
    """
    skills = {entry.name: entry.to_json(digest) for entry, digest in entries}
    data = {"version": NPX_LOCK_VERSION, "skills": {k: skills[k] for k in sorted(skills)}}
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_npx_lock(path: str | os.PathLike, entries: Iterable[tuple[NpxLockEntry, str | None]]):
    """Write ``format_npx_lock(entries)`` to ``path`` atomically."""
    write_atomic(Path(path), format_npx_lock(entries))


def _bundle_npx_hash(bundle) -> str:
    return npx_hash((f.path, bundle.contents[f.path]) for f in bundle.files)


def npx_pins(store, entries: dict[str, NpxLockEntry]) -> dict[str, str]:
    """name -> our bundle digest for each entry of npx's lock: the digest we wrote there, else
    the stored version of that name whose files hash to the entry's computedHash.

    Args:
        store: an open Store.
        entries: from ``read_npx_lock``.
    Returns:
        The pins; an entry no stored version matches is pinned to its computedHash, which no
        bundle digest equals (so installing it is refused, naming the hash).
    """
    pins: dict[str, str] = {}
    for name, entry in entries.items():
        if entry.chimera_digest:
            pins[name] = entry.chimera_digest
            continue
        if entry.computed_hash is None:
            continue
        pins[name] = entry.computed_hash
        for version in store.versions(name=name):
            if _bundle_npx_hash(store.get_bundle(version)) == entry.computed_hash:
                pins[name] = version.digest
                break
    return pins


def npx_lock_entries(store, versions) -> list[tuple[NpxLockEntry, str]]:
    """A ``skills-lock.json`` entry for each stored version (for ``lock --format npx``): the
    source npx recorded when the version was adopted, else the folder it was imported from,
    and npx's computedHash of its files.

    Args:
        store: an open Store.
        versions: the versions to lock, one per name.
    Returns:
        (entry, our bundle digest) per version.
    """
    out = []
    for version in versions:
        recorded = version.source.get("recorded", {}) if isinstance(version.source, dict) else {}
        lock = recorded.get("lock") if isinstance(recorded, dict) else None
        computed = _bundle_npx_hash(store.get_bundle(version))
        if isinstance(lock, dict) and isinstance(lock.get("source"), str):
            entry = NpxLockEntry(
                name=version.name,
                source=lock["source"],
                source_type=str(lock.get("sourceType") or "unknown"),
                computed_hash=computed,
                source_url=_text(lock.get("sourceUrl")),
                ref=_text(lock.get("ref")),
                skill_path=_text(lock.get("skillPath")),
            )
        else:
            entry = NpxLockEntry(
                name=version.name,
                source=_source_of(version),
                source_type="local" if not version.final_url else "well-known",
                computed_hash=computed,
            )
        out.append((entry, version.digest))
    return out


def _source_of(version) -> str:
    """Where a version came from, as npx writes a source: the skill's folder for a path."""
    path = version.source.get("path") if isinstance(version.source, dict) else None
    if isinstance(path, str) and path:
        return path
    origin = version.origin
    return os.path.dirname(origin) if origin.endswith("/SKILL.md") else origin
