"""What may be served to an agent right now: approved skills, re-hashed at the moment they are read.

A catalog answers every question afresh (nothing is cached between calls), so an approval shows
up on the next request and a tampered blob, a removed trust key or an edited folder makes the
skill vanish on the next request. A skill that is pending, rejected, retired, revoked or
tampered with is simply absent: the reason goes to ``notes`` for the operator, never to the
agent.

Two sources:

- ``StoreCatalog``: the store's usable versions (active, approvals verifying under the trust
  list now, or a clean local import), each bundle read from the store and every file re-hashed
  against its manifest (``Store.get_bundle``).
- ``FolderCatalog``: an agent's skills folder (``.claude/skills``), where a skill is served only
  when the folder's bytes, read once into memory, are a stored bundle that passes the gate (what
  ``check`` calls ``ok``). The bytes served are the bytes hashed, so an edit between the check
  and the read cannot slip through. Sidecars (the install receipt, ``approvals.jsonl``) and
  ignored names are not skill files.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from chimera_cards._bundles.bundle import SKILL_FILE, Bundle, BundleError, read_bundle_dir
from chimera_cards._bundles.folderscan import find_skill_folders
from chimera_cards._cards.card import CardParseError, parse_card
from chimera_cards._install.policy import (
    Policy,
    StoredSkill,
    load_bundle,
    load_bundles,
    stored_skills,
)
from chimera_cards._store.facade import Store
from chimera_cards.errors import ChimeraError

# The Agent Skills naming rule (lowercase letters, digits, single hyphens, 1-64 characters): the
# MCP Skills extension puts the name in the URI, so a skill breaking it cannot be addressed.
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def valid_skill_name(name: str) -> bool:
    """Whether ``name`` follows the Agent Skills naming rule (and so can be a URI segment)."""
    return 0 < len(name) <= 64 and _NAME.fullmatch(name) is not None


@dataclass(frozen=True)
class ServedFile:
    """One file of a served skill: its path inside the skill, exact bytes, exec bit, SHA-256."""

    path: str
    data: bytes = field(repr=False)
    executable: bool
    sha256: str


@dataclass(frozen=True)
class ServedSkill:
    """An approved skill as it is served: every file, re-hashed when it was read.

    ``frontmatter`` is SKILL.md's frontmatter as a JSON-compatible object; ``location`` is the
    folder it was read from (None for the store).
    """

    name: str
    digest: str
    frontmatter: dict
    files: tuple[ServedFile, ...]
    location: str | None = None

    def file(self, path: str) -> ServedFile | None:
        """The file at ``path`` (POSIX, relative to the skill root), if the skill has it."""
        return next((f for f in self.files if f.path == path), None)

    @property
    def body(self) -> str:
        """SKILL.md after its frontmatter (the instructions)."""
        skill_md = self.file(SKILL_FILE)
        return parse_card(skill_md.data).body if skill_md is not None else ""


def frontmatter_json(data: bytes) -> dict:
    """SKILL.md's frontmatter as a JSON object, or ValueError when it cannot be one.

    The card parser reads it (strict about the envelope: no anchors, tags or duplicate keys); a
    value JSON cannot carry (a YAML date) refuses the skill, as the MCP Skills extension requires
    the frontmatter to pass through verbatim.
    """
    try:
        card = parse_card(data)
    except CardParseError as exc:
        raise ValueError(f"SKILL.md does not parse: {exc}") from None
    meta = card.frontmatter
    if not isinstance(meta, dict):
        raise ValueError("SKILL.md frontmatter is not a mapping")
    try:
        text = json.dumps(meta, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        raise ValueError("SKILL.md frontmatter holds a value JSON cannot carry") from None
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not valid_skill_name(name):
        raise ValueError(f"skill name {name!r} breaks the Agent Skills naming rule")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("SKILL.md has no description")
    parsed: dict = json.loads(text)
    return parsed


def _served(name: str, bundle: Bundle, location: str | None) -> ServedSkill:
    frontmatter = frontmatter_json(bundle.skill_md)
    if frontmatter["name"] != name:
        raise ValueError(f"its frontmatter names it {frontmatter['name']!r}")
    files = tuple(
        ServedFile(f.path, bundle.contents[f.path], f.executable, f.sha256) for f in bundle.files
    )
    return ServedSkill(name, bundle.digest, frontmatter, files, location)


class Catalog:
    """The skills an agent may be served now. Subclasses read their source on every call.

    ``notes`` collects one line per skill left out and why (for logs, never for the agent).
    """

    def __init__(self) -> None:
        self.notes: list[str] = []

    def names(self) -> list[str]:
        """The names that may be served, sorted (the gate and the re-hash are in ``get``)."""
        raise NotImplementedError

    def get(self, name: str) -> ServedSkill | None:
        """The skill called ``name``, re-read and re-hashed now; None when it may not be served."""
        raise NotImplementedError

    def skills(self) -> list[ServedSkill]:
        """Every skill that may be served now, sorted by name, each re-read and re-hashed."""
        found = [self.get(name) for name in self.names()]
        return [skill for skill in found if skill is not None]

    def _note(self, text: str) -> None:
        self.notes.append(text)


def _usable_by_name(skills: Iterable[StoredSkill]) -> dict[str, StoredSkill]:
    chosen: dict[str, StoredSkill] = {}
    for skill in skills:  # oldest first: the newest usable version of a name wins
        if skill.usable:
            chosen[skill.name] = skill
    return chosen


class StoreCatalog(Catalog):
    """The store's usable versions, one per name (the newest usable one).

    Args:
        store_path: the store file; it is opened afresh for every call, so another process's
            approval, trust change or tampering is seen on the next request.
        policy: whose approvals count (default: the store's trust list and threshold).
    """

    def __init__(self, store_path: str | os.PathLike, policy: Policy | None = None) -> None:
        super().__init__()
        self.store_path = Path(store_path)
        self.policy = policy or Policy()

    def _open(self) -> Store:
        return Store(self.store_path, create=False)

    def names(self) -> list[str]:
        with self._open() as store:
            usable = _usable_by_name(stored_skills(store, self.policy, manifests=False))
        return sorted(name for name in usable if valid_skill_name(name))

    def skills(self) -> list[ServedSkill]:
        # One store read for all: the gate once, every bundle in a few queries (each file still
        # re-hashed); a tampered one makes the reads go one by one, so it hides only itself.
        with self._open() as store:
            usable = _usable_by_name(stored_skills(store, self.policy, manifests=False))
            chosen = [usable[name] for name in sorted(usable) if valid_skill_name(name)]
            try:
                bundles = load_bundles(store, chosen)
            except ChimeraError:
                return super().skills()
        served = []
        for skill, bundle in zip(chosen, bundles, strict=True):
            try:
                served.append(_served(skill.name, bundle, None))
            except ValueError as exc:
                self._note(f"{skill.name}: not served: {exc}")
        return served

    def get(self, name: str) -> ServedSkill | None:
        if not valid_skill_name(name):
            return None
        with self._open() as store:
            usable = _usable_by_name(stored_skills(store, self.policy, [name], manifests=False))
            skill = usable.get(name)
            if skill is None:
                return None
            try:
                bundle = load_bundle(store, skill)
            except ChimeraError as exc:  # tampered with in the store: absent, and said why
                self._note(f"{name}: not served: {exc}")
                return None
        try:
            return _served(name, bundle, None)
        except ValueError as exc:
            self._note(f"{name}: not served: {exc}")
            return None


class FolderCatalog(Catalog):
    """An agent's skills folder, serving only the folders whose bytes are an approved bundle.

    Args:
        store_path: the store the folder's bytes are judged against (opened for every call).
        directory: the skills folder (``.claude/skills``).
        policy: whose approvals count.
    """

    def __init__(
        self,
        store_path: str | os.PathLike,
        directory: str | os.PathLike,
        policy: Policy | None = None,
    ) -> None:
        super().__init__()
        self.store_path = Path(store_path)
        self.directory = Path(directory)
        self.policy = policy or Policy()

    def names(self) -> list[str]:
        try:
            folders = find_skill_folders(self.directory)
        except OSError as exc:
            self._note(f"{self.directory}: cannot list ({exc.strerror})")
            return []
        return sorted(f.name for f in folders if valid_skill_name(f.name))

    def _read(self, name: str) -> Bundle | None:
        if not valid_skill_name(name):
            return None
        folder = self.directory / name
        if folder.is_symlink() or not (folder / SKILL_FILE).is_file():
            return None
        try:
            return read_bundle_dir(folder)  # the bytes served are exactly these
        except (BundleError, OSError) as exc:
            self._note(f"{name}: not served: {exc}")
            return None

    def skills(self) -> list[ServedSkill]:
        # Every folder read, then the store asked once about all their digests.
        read = [(name, self._read(name)) for name in self.names()]
        bundles = [(name, bundle) for name, bundle in read if bundle is not None]
        with Store(self.store_path, create=False) as store:
            digests = [bundle.digest for _, bundle in bundles]
            found = stored_skills(store, self.policy, [], digests, manifests=False)
        served = []
        for name, bundle in bundles:
            skill = self._judged(name, bundle, [s for s in found if s.digest == bundle.digest])
            if skill is not None:
                served.append(skill)
        return served

    def get(self, name: str) -> ServedSkill | None:
        bundle = self._read(name)
        if bundle is None:
            return None
        with Store(self.store_path, create=False) as store:
            found = stored_skills(store, self.policy, [], [bundle.digest], manifests=False)
        return self._judged(name, bundle, found)

    def _judged(self, name: str, bundle: Bundle, found: list[StoredSkill]) -> ServedSkill | None:
        """The folder's bundle as served when a stored version with its digest is usable."""
        folder = self.directory / name
        if not any(s.usable for s in found):
            why = "its bytes are no approved bundle" if not found else found[-1].why
            self._note(f"{name}: not served: {why or 'not approved'}")
            return None
        try:
            return _served(name, bundle, str(folder))
        except ValueError as exc:
            self._note(f"{name}: not served: {exc}")
            return None
