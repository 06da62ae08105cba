"""Take over skills as ``npx skills`` left them: import every skill its agents' folders hold.

``npx skills add`` keeps one copy of each skill under ``.agents/skills`` (or in one agent's
folder), links the other agents' folders to it, and records where it came from in
``skills-lock.json`` (with ``--global``: the user's folders and ``~/.agents/.skill-lock.json``).
``adopt`` walks every agent folder (links resolved, never followed out of the project, or the
home for ``--global``), imports each distinct skill folder as a version, and records **npx's
source** as where that version comes from: ``update`` and ``outdated`` fetch from there, never
from the installed folder, so a local edit of an installed copy is drift (``check``:
``modified``), not an update. A skill whose source is remote is held (tainted), as importing it
from there would be; a local one is imported as a local path is.

A folder whose files are not what npx hashed (``computedHash``) is reported and exits 1, unless
it is one of npx's own quirks, which are named instead: npx hashes a skill's source but leaves
``metadata.json`` out of the copy it installs (vercel-labs/skills#806), checked against the
source itself; and for Eve npx writes a copy whose ``SKILL.md`` frontmatter it re-serialises,
reported as that copy of the canonical folder and never imported over it. A folder of a name
this store already holds, whose bytes are neither a stored version nor what npx recorded, is a
local edit: reported ``modified``, not imported. Nothing is written outside the store.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chimera_cards._bundles.bundle import BundleError, read_bundle_dir
from chimera_cards._bundles.digests import (
    npx_copied,
    npx_folder_files,
    npx_hash,
)
from chimera_cards._bundles.folderscan import RECEIPT_NAME, find_skill_folders
from chimera_cards._bundles.links import resolve_entry
from chimera_cards._importer.npxlock import (
    NPX_LOCK_NAME,
    NpxLockEntry,
    global_npx_lock_path,
    read_npx_lock,
)
from chimera_cards._importer.pipeline import import_source
from chimera_cards._install.agents import AGENTS, find_agent, project_dir, user_dir
from chimera_cards.errors import ChimeraError, UsageError

ISSUE_806 = "vercel-labs/skills#806"
# The frontmatter keys npx keeps when it rewrites SKILL.md for Eve (stripIgnoredEveFrontmatter).
_EVE_KEYS = ("name", "description", "license", "compatibility", "version", "metadata")
_FRONTMATTER = re.compile(rb"\A---\r?\n(.*?)\r?\n---\r?\n?(.*)\Z", re.DOTALL)


class NothingToAdoptError(ChimeraError):
    """The project has no skill in any agent folder (exit 1): nothing was imported."""


@dataclass
class AdoptedSkill:
    """One skill folder, and what adopting it did."""

    name: str
    path: str  # the folder imported (the canonical copy when agents link to it)
    # "imported" | "present" | "refused" | "missing" | "outside" | "modified" | "eve-copy"
    outcome: str
    status: str | None = None  # the version's status: active, pending, ...
    digest: str | None = None
    reason: str = ""
    linked_from: list[str] = field(default_factory=list)  # agent folders that link here
    source: dict | None = None  # what npx's lock recorded
    upstream: dict | None = None  # where update fetches it from (None: nowhere recorded)
    npx_hash: str | None = None  # npx's computedHash of the folder as it is now
    npx_hash_matches: bool | None = None  # None: no lock hash to compare with
    quirk: str = ""  # an npx quirk that explains a difference (named, not alarmed)

    @property
    def needs_review(self) -> bool:
        return self.outcome in ("imported", "present") and self.status == "pending"

    @property
    def ok(self) -> bool:
        taken = self.outcome in ("imported", "present", "eve-copy")
        return taken and self.npx_hash_matches is not False

    def to_dict(self) -> dict:
        return {**asdict(self), "needs_review": self.needs_review, "ok": self.ok}


@dataclass
class AdoptReport:
    """Every skill ``adopt`` found, and whether everything could be taken as npx left it."""

    root: str
    lockfile: str | None
    skills: list[AdoptedSkill]

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.skills)

    def to_review(self) -> list[AdoptedSkill]:
        return [s for s in self.skills if s.needs_review]

    def to_dict(self) -> dict:
        return {
            "root": self.root,
            "lockfile": self.lockfile,
            "ok": self.ok,
            "skills": [s.to_dict() for s in self.skills],
        }


@dataclass
class AdoptPlan:
    """What ``adopt`` found before touching the store: the lock's entries, each distinct skill
    folder (name, folder, the agent folders that link to it, the skills directory it is in),
    and the lines already decided."""

    root: Path
    lock_path: Path
    lock: dict[str, NpxLockEntry]
    folders: list[tuple[str, Path, list[str], Path]]
    lines: list[AdoptedSkill]
    eve_dir: Path | None = None  # Eve's skills folder, whose copies npx rewrites
    boundary: Path | None = None  # links may not leave it (the project, or the home)


def _agent_dirs(root: Path, global_: bool, env: Mapping[str, str]) -> list[Path]:
    seen: dict[str, Path] = {}
    for agent in AGENTS:
        if global_:
            if agent.user is None:
                continue
            try:
                folder = user_dir(agent, env)
            except UsageError:
                continue
        else:
            folder = project_dir(agent, root)
        if folder.is_dir():
            seen.setdefault(os.path.realpath(folder), folder)
    return sorted(seen.values())


def plan_adopt(
    root: str | os.PathLike = ".",
    *,
    global_: bool = False,
    env: Mapping[str, str] | None = None,
) -> AdoptPlan:
    """Find what ``adopt`` would import (reads only).

    Args:
        root: the project root (where ``skills-lock.json`` is); ignored with ``global_``.
        global_: the user-wide folders of every agent and npx's user-wide lock instead.
        env: the environment (default: this process's), for the home and the lock's place.
    Raises:
        NpxLockError: the lock file is there but is not npx's.
        NothingToAdoptError: no agent folder holds a skill and there is no lock file.
    """
    seen_env = os.environ if env is None else env
    if global_:
        home = Path(seen_env.get("HOME") or os.path.expanduser("~"))
        root, lock_path, boundary, eve_dir = home, global_npx_lock_path(seen_env), home, None
    else:
        root = Path(root)
        lock_path, boundary = root / NPX_LOCK_NAME, root
        eve_dir = project_dir(find_agent("eve"), root)
    lock: dict[str, NpxLockEntry] = read_npx_lock(lock_path) if lock_path.exists() else {}
    found: dict[str, tuple[str, Path, list[str], Path]] = {}  # real path -> folder, links
    lines: list[AdoptedSkill] = []
    for directory in _agent_dirs(root, global_, seen_env):
        for entry in find_skill_folders(directory):
            info = resolve_entry(entry, boundary)
            if info.target is None:
                outcome = "outside" if not info.inside else "refused"
                lines.append(AdoptedSkill(entry.name, str(entry), outcome, reason=info.describe()))
                continue
            real = os.path.realpath(info.target)
            links = found.setdefault(real, (entry.name, info.target, [], directory))[2]
            if info.link is not None:
                links.append(str(entry))
    if not found and not lines and not lock:
        where = "the user-wide agent folders" if global_ else str(root)
        raise NothingToAdoptError(
            f"{where}: no skill in any agent folder (.agents/skills, .claude/skills, ...) "
            f"and no {lock_path.name}"
        )
    eve_real = os.path.realpath(eve_dir) if eve_dir is not None else None

    def order(item: tuple[str, Path, list[str], Path]) -> tuple[bool, str]:
        # Eve's rewritten copies after the folders they copy; otherwise by place.
        return (os.path.realpath(item[3]) == eve_real, str(item[1]))

    folders = sorted(found.values(), key=order)
    return AdoptPlan(root, lock_path, lock, folders, lines, eve_dir, boundary)


def adopt(
    store,
    root: str | os.PathLike = ".",
    plan: AdoptPlan | None = None,
    *,
    timeout: float | None = None,
) -> AdoptReport:
    """Import every skill the agents' folders hold, each with npx's source as its upstream.

    Args:
        store: an open Store (created by the caller if missing).
        root: the project root (where ``skills-lock.json`` is).
        plan: ``plan_adopt(...)``, when the caller made it first (to refuse before creating a
            store).
        timeout: seconds for fetching a source to check a difference npx may explain.
    Returns:
        The report: one line per distinct skill folder, per link that leaves the project, and
        per lock entry whose folder is missing.
    Raises:
        NpxLockError, NothingToAdoptError: as ``plan_adopt``.
    """
    plan = plan if plan is not None else plan_adopt(root)
    skills = list(plan.lines)
    taken: dict[str, AdoptedSkill] = {}  # name -> the folder adopted under it in this run
    for name, folder, links, directory in plan.folders:
        in_eve = plan.eve_dir is not None and os.path.realpath(directory) == os.path.realpath(
            plan.eve_dir
        )
        first = taken.get(name)
        if first is not None:
            skills.append(_second_copy(name, folder, links, first, eve=in_eve))
            continue
        line = _adopt_one(store, plan, name, folder, links, timeout)
        skills.append(line)
        if line.outcome in ("imported", "present", "modified"):
            taken[name] = line
    adopted = {s.name for s in skills}
    for name, recorded in plan.lock.items():
        if name not in adopted:
            skills.append(
                AdoptedSkill(
                    name,
                    "",
                    "missing",
                    reason=f"in {plan.lock_path.name} but in no agent folder",
                    source=recorded.origin(),
                )
            )
    return AdoptReport(str(plan.root), str(plan.lock_path) if plan.lock else None, skills)


def _adopt_one(
    store,
    plan: AdoptPlan,
    name: str,
    folder: Path,
    links: list[str],
    timeout: float | None,
) -> AdoptedSkill:
    entry = plan.lock.get(name)
    line = AdoptedSkill(name, str(folder), "refused", linked_from=sorted(links))
    try:
        installed = [f for f in npx_folder_files(folder) if f[0] != RECEIPT_NAME]
        bundle = read_bundle_dir(folder)
    except OSError as exc:
        line.reason = f"cannot read ({exc.strerror})"
        return line
    except BundleError as exc:
        line.reason = str(exc)
        return line
    line.npx_hash = npx_hash(installed)
    note: dict = {"kind": "npx-adopt"}
    if entry is not None:
        line.source = entry.origin()
        line.upstream = entry.upstream(plan.root)
        note["lock"] = line.source
        if line.upstream is not None:
            note["upstream"] = line.upstream
        if entry.computed_hash is not None:
            line.npx_hash_matches = entry.computed_hash == line.npx_hash
            if not line.npx_hash_matches:
                line.quirk = _left_out_by_npx(entry, plan.root, installed, timeout)
                if line.quirk:
                    line.npx_hash_matches = True
                    note["quirk"] = "metadata-json-dropped"
    stored = {v.digest for v in store.versions(name=name)}
    if stored and bundle.digest not in stored and line.npx_hash_matches is not True:
        # A name this store holds, bytes it does not, and nothing from npx to vouch for them:
        # a local edit of an installed copy. Importing it would make the edit a version.
        line.outcome = "modified"
        line.digest = bundle.digest
        line.reason = (
            "differs from every stored version of this name and from what npx recorded: a "
            "local edit is drift, not an update (chimera-cards check shows it; chimera-cards "
            "update fetches from the source npx recorded)"
        )
        return line
    remote = entry is not None and entry.remote
    taint = remote or line.npx_hash_matches is False
    try:
        results = import_source(store, folder, taint=taint, source_note=note)
    except ChimeraError as exc:
        line.reason = str(exc)
        return line
    result = results[0]
    line.outcome = result.outcome
    line.status = result.status
    line.digest = result.digest
    reasons = [result.error or result.reason or ""]
    if line.npx_hash_matches is False:
        reasons.append(f"files differ from what npx recorded in {plan.lock_path.name}")
    if line.quirk:
        reasons.append(line.quirk)
    line.reason = "; ".join(r for r in reasons if r)
    return line


def _second_copy(
    name: str, folder: Path, links: list[str], first: AdoptedSkill, *, eve: bool
) -> AdoptedSkill:
    """Another folder of a name already adopted in this run: never imported over the first
    (that would retire it); the same bytes are that version, Eve's rewrite is named as such,
    anything else is reported."""
    line = AdoptedSkill(name, str(folder), "modified", linked_from=sorted(links))
    line.status, line.source, line.upstream = first.status, first.source, first.upstream
    try:
        digest = read_bundle_dir(folder).digest
    except (OSError, BundleError) as exc:
        line.reason = f"cannot read ({getattr(exc, 'strerror', None) or exc})"
        return line
    line.digest = digest
    if digest == first.digest:
        line.outcome = "present"
        line.reason = f"the same bytes as {first.path}"
        return line
    if eve and is_eve_rewrite(Path(first.path), folder):
        line.outcome = "eve-copy"
        line.digest = first.digest
        line.reason = (
            f"npx's copy for Eve of {first.path}: its SKILL.md frontmatter re-written by npx "
            "(keys Eve ignores dropped, YAML re-serialised), every other byte the same"
        )
        return line
    line.reason = f"differs from {first.path}, adopted under the same name (not imported over it)"
    return line


def _left_out_by_npx(
    entry: NpxLockEntry, root: Path, installed: list[tuple[str, bytes]], timeout: float | None
) -> str:
    """Why the installed files differ from computedHash when that is npx's own doing: the
    source hashes to it, and npx copied all of it but the files it leaves out (#806). ""
    otherwise (or when the source cannot be read to tell)."""
    source = _source_files(entry, root, timeout)
    if source is None or npx_hash(source) != entry.computed_hash:
        return ""
    copied = npx_copied(source)
    if sorted(copied) != sorted(installed):
        return ""
    left = sorted({p for p, _ in source} - {p for p, _ in copied})
    shown = ", ".join(left[:3]) + (" …" if len(left) > 3 else "")
    return (
        f"npx left {shown} out of the copy it installed ({ISSUE_806}); the source it hashed "
        "holds it, the rest is byte for byte what npx recorded"
    )


def _source_files(
    entry: NpxLockEntry, root: Path, timeout: float | None
) -> list[tuple[str, bytes]] | None:
    """The files of the skill's source as npx hashed them, or None when it cannot be read."""
    up = entry.upstream(root)
    if up is None:
        return None
    if up["sourceType"] in ("local", "node_modules"):
        top = Path(up["source"])
        where = top if (top / "SKILL.md").is_file() else _named_in(top, entry.name)
        if where is None:
            return None
        try:
            return npx_folder_files(where)
        except OSError:
            return None
    from chimera_cards._sources.find import find_skills, pick  # a fetch: only on a difference

    try:
        if timeout is None:
            found = find_skills(up["source"], ref=up.get("ref"))
        else:
            found = find_skills(up["source"], ref=up.get("ref"), timeout=timeout)
        if up.get("path"):
            found = [s for s in found if s.info.get("path") == up["path"]]
        found = pick(found, entry.name, source=up["source"])
    except ChimeraError:
        return None
    if len(found) != 1 or found[0].bundle is None:
        return None
    bundle = found[0].bundle
    return [(f.path, bundle.contents[f.path]) for f in bundle.files]


def _named_in(folder: Path, name: str) -> Path | None:
    """The skill folder named ``name`` below a local source (by folder name, else by the name
    in its SKILL.md), as npx picks a skill out of a collection."""
    from chimera_cards._sources.find import find_skills, pick

    try:
        found = pick(find_skills(str(folder), read=False), name, source=str(folder))
    except ChimeraError:
        return None
    paths = [str(s.info["path"]) for s in found if s.info.get("path")]
    return Path(paths[0]) if len(paths) == 1 else None


def _frontmatter(data: bytes) -> tuple[dict, bytes] | None:
    import yaml

    m = _FRONTMATTER.match(data)
    if m is None:
        return None
    try:
        value = yaml.safe_load(m.group(1).decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError):
        return None
    return (value, m.group(2)) if isinstance(value, dict) else None


def _same_value(a: object, b: object) -> bool:
    # npx re-serialises a YAML number as its JSON value (version 1.0 becomes 1).
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b


def is_eve_rewrite(canonical: Path, copy: Path) -> bool:
    """Whether ``copy`` is what npx writes for Eve from ``canonical``: every file the same but
    ``SKILL.md``, rewritten as ``eve_skill_md`` says.

    Args:
        canonical: the folder npx installed for the other agents.
        copy: Eve's folder of the same skill.
    """
    try:
        ours = dict(npx_folder_files(canonical))
        theirs = dict(npx_folder_files(copy))
    except OSError:
        return False
    ours.pop(RECEIPT_NAME, None)
    theirs.pop(RECEIPT_NAME, None)
    skill = "SKILL.md"
    if set(ours) != set(theirs) or skill not in ours:
        return False
    if any(ours[p] != theirs[p] for p in ours if p != skill):
        return False
    return eve_skill_md(ours[skill], theirs[skill])


def eve_skill_md(original: bytes, copy: bytes) -> bool:
    """Whether ``copy`` is npx's rewrite of ``original`` (a SKILL.md) for Eve: its frontmatter
    keeps only the keys Eve reads, with the same values, re-serialised by npx's YAML writer
    (which folds long lines), and the body is unchanged."""
    before, after = _frontmatter(original), _frontmatter(copy)
    if before is None or after is None:
        return False
    kept = {k: before[0][k] for k in _EVE_KEYS if k in before[0]}
    if set(kept) != set(after[0]) or not all(_same_value(kept[k], after[0][k]) for k in kept):
        return False
    body = before[1][1:] if before[1].startswith(b"\n") else before[1]
    body = body[2:] if body.startswith(b"\r\n") else body
    return after[1] == body
