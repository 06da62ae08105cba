"""Take over a project as ``npx skills`` left it: import every skill its agents' folders hold.

``npx skills add`` keeps one copy of each skill under ``.agents/skills`` (or in one agent's
folder), links the other agents' folders to it, and records where it came from in
``skills-lock.json``. ``adopt`` walks every agent folder of the project (links resolved, never
followed out of the project), imports each distinct skill folder as a version with the source
npx recorded, and says what a reviewer must approve: a skill whose recorded source is remote is
held (tainted), as importing it from there would be; a local one is imported as a local path is.
A folder whose files are no longer what npx hashed (``computedHash``) is reported, and so is an
entry of the lock file whose folder is gone. Nothing is written outside the store.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chimera_cards._bundles.digests import npx_hash_folder
from chimera_cards._bundles.folderscan import RECEIPT_NAME, find_skill_folders
from chimera_cards._bundles.links import resolve_entry
from chimera_cards._importer.npxlock import NPX_LOCK_NAME, NpxLockEntry, read_npx_lock
from chimera_cards._importer.pipeline import import_source
from chimera_cards._install.agents import AGENTS, project_dir
from chimera_cards.errors import ChimeraError


class NothingToAdoptError(ChimeraError):
    """The project has no skill in any agent folder (exit 1): nothing was imported."""


@dataclass
class AdoptedSkill:
    """One skill folder of the project, and what adopting it did."""

    name: str
    path: str  # the folder imported (the canonical copy when agents link to it)
    outcome: str  # "imported" | "present" | "refused" | "missing" | "outside"
    status: str | None = None  # the version's status: active, pending, ...
    digest: str | None = None
    reason: str = ""
    linked_from: list[str] = field(default_factory=list)  # agent folders that link here
    source: dict | None = None  # what skills-lock.json recorded
    npx_hash: str | None = None  # npx's computedHash of the folder as it is now
    npx_hash_matches: bool | None = None  # None: no lock entry to compare with

    @property
    def needs_review(self) -> bool:
        return self.outcome in ("imported", "present") and self.status == "pending"

    def to_dict(self) -> dict:
        return {**asdict(self), "needs_review": self.needs_review}


@dataclass
class AdoptReport:
    """Every skill ``adopt`` found, and whether the project holds anything it could not take."""

    root: str
    lockfile: str | None
    skills: list[AdoptedSkill]

    @property
    def ok(self) -> bool:
        return all(s.outcome in ("imported", "present") for s in self.skills)

    def to_review(self) -> list[AdoptedSkill]:
        return [s for s in self.skills if s.needs_review]

    def to_dict(self) -> dict:
        return {
            "root": self.root,
            "lockfile": self.lockfile,
            "ok": self.ok,
            "skills": [s.to_dict() for s in self.skills],
        }


def _agent_dirs(root: Path) -> list[Path]:
    seen: dict[str, Path] = {}
    for agent in AGENTS:
        folder = project_dir(agent, root)
        if folder.is_dir():
            seen.setdefault(os.path.realpath(folder), folder)
    return sorted(seen.values())


@dataclass
class AdoptPlan:
    """What ``adopt`` found before touching the store: the lock's entries, each distinct skill
    folder (name, folder, the agent folders that link to it), and the lines already decided."""

    root: Path
    lock_path: Path
    lock: dict[str, NpxLockEntry]
    folders: list[tuple[str, Path, list[str]]]
    lines: list[AdoptedSkill]


def plan_adopt(root: str | os.PathLike = ".") -> AdoptPlan:
    """Find what ``adopt`` would import in the project at ``root`` (reads only).

    Raises:
        NpxLockError: ``skills-lock.json`` is there but is not npx's.
        NothingToAdoptError: no agent folder holds a skill and there is no lock file.
    """
    root = Path(root)
    lock_path = root / NPX_LOCK_NAME
    lock: dict[str, NpxLockEntry] = read_npx_lock(lock_path) if lock_path.exists() else {}
    found: dict[str, tuple[str, Path, list[str]]] = {}  # real path -> (name, folder, links)
    lines: list[AdoptedSkill] = []
    for directory in _agent_dirs(root):
        for entry in find_skill_folders(directory):
            info = resolve_entry(entry, root)
            if info.target is None:
                outcome = "outside" if not info.inside else "refused"
                lines.append(AdoptedSkill(entry.name, str(entry), outcome, reason=info.describe()))
                continue
            real = os.path.realpath(info.target)
            links = found.setdefault(real, (entry.name, info.target, []))[2]
            if info.link is not None:
                links.append(str(entry))
    if not found and not lines and not lock:
        raise NothingToAdoptError(
            f"{root}: no skill in any agent folder (.agents/skills, .claude/skills, ...) "
            f"and no {NPX_LOCK_NAME}"
        )
    return AdoptPlan(root, lock_path, lock, [found[k] for k in sorted(found)], lines)


def adopt(store, root: str | os.PathLike = ".", plan: AdoptPlan | None = None) -> AdoptReport:
    """Import every skill the agents' folders of the project at ``root`` hold.

    Args:
        store: an open Store (created by the caller if missing).
        root: the project root (where ``skills-lock.json`` is).
        plan: ``plan_adopt(root)``, when the caller made it first (to refuse before creating a
            store).
    Returns:
        The report: one line per distinct skill folder, per link that leaves the project, and
        per lock entry whose folder is missing.
    Raises:
        NpxLockError, NothingToAdoptError: as ``plan_adopt``.
    """
    plan = plan if plan is not None else plan_adopt(root)
    skills = list(plan.lines)
    for name, folder, links in plan.folders:
        skills.append(_adopt_one(store, name, folder, links, plan.lock.get(name)))
    adopted = {s.name for s in skills}
    for name, recorded in plan.lock.items():
        if name not in adopted:
            skills.append(
                AdoptedSkill(
                    name,
                    "",
                    "missing",
                    reason=f"in {NPX_LOCK_NAME} but in no agent folder",
                    source=recorded.origin(),
                )
            )
    return AdoptReport(str(plan.root), str(plan.lock_path) if plan.lock else None, skills)


def _adopt_one(
    store, name: str, folder: Path, links: list[str], entry: NpxLockEntry | None
) -> AdoptedSkill:
    line = AdoptedSkill(name, str(folder), "refused", linked_from=sorted(links))
    try:
        line.npx_hash = npx_hash_folder(folder, leave_out=(RECEIPT_NAME,))
    except OSError as exc:
        line.reason = f"cannot read ({exc.strerror})"
        return line
    note: dict = {"kind": "npx-adopt"}
    if entry is not None:
        line.source = entry.origin()
        note["lock"] = line.source
        if entry.computed_hash is not None:
            line.npx_hash_matches = entry.computed_hash == line.npx_hash
    try:
        results = import_source(
            store, folder, taint=entry is not None and entry.remote, source_note=note
        )
    except ChimeraError as exc:
        line.reason = str(exc)
        return line
    result = results[0]
    line.outcome = result.outcome
    line.status = result.status
    line.digest = result.digest
    reasons = [result.error or result.reason or ""]
    if line.npx_hash_matches is False:
        reasons.append(f"files differ from what npx recorded in {NPX_LOCK_NAME}")
    line.reason = "; ".join(r for r in reasons if r)
    return line
