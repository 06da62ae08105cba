"""``check``: compare installed folders with what the store approves now."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from chimera_cards._bundles.folderscan import (
    Scan,
    start_scan,
)
from chimera_cards._install.policy import Policy, StoredSkill, stored_skills
from chimera_cards._install.receipt import FolderScan, Receipt, _folder_scan, read_index
from chimera_cards._install.state import (
    Candidate,
    SkillState,
    classify,
    link_state,
    missing_state,
)
from chimera_cards._util.records import record, replace
from chimera_cards.errors import UsageError

TYPE_CHECKING = False  # typing is not imported at run time: check starts up on this module
if TYPE_CHECKING:
    from chimera_cards._bundles.links import LinkInfo  # loaded only where a folder is a link


@record
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
    npx_lock: Mapping[str, object] | None = None,
    pins: Mapping[str, str] | None = None,
    only: Iterable[str] | None = None,
) -> CheckReport:
    """One state per skill entry in each directory, plus ``missing`` for recorded installs
    whose folder is gone.

    A link is judged by the bytes at its target (its line names where it leads); one that
    leaves the project or leads to no folder is ``unknown`` and never read.

    Args:
        store: an open Store, or None when there is none yet (every folder is then unknown).
        directories: skills directories (e.g. ``.claude/skills``).
        policy: whose approvals count (default: the store's trust list and threshold).
        scan: ``folderscan.start_scan(directories)``, when the caller started hashing early
            (it is finished and closed here).
        npx_lock: ``npxlock.read_npx_lock`` of a ``skills-lock.json``: each skill's folder must
            also hash to npx's ``computedHash`` there, and each entry must have a folder.
        pins: name -> bundle digest from our lockfile: an ok folder must be that bundle, a
            skill folder the lockfile does not pin is ``unpinned``, and a pin with no folder is
            ``missing`` (the folders must be exactly the lock).
        only: judge only the skill folders of these names (their siblings are not read).
    Returns:
        The report; ``ok`` only when every state is ok.
    Raises:
        UsageError: a directory exists but cannot be listed.
    """
    wanted = None if only is None else frozenset(only)
    started = scan if scan is not None else start_scan(list(directories), only=wanted)
    with started:
        if started.unreadable is not None:
            directory, exc = started.unreadable
            raise UsageError(f"{directory}: cannot read ({exc.strerror})")
        records = started.result()
    # The receipt was read with the folder's files; None when there is none or it is not ours.
    scans = iter(
        [(_folder_scan(r), None if r[2] is None else Receipt.from_bytes(r[2])) for r in records]
    )
    found: list[tuple[Path, list]] = []
    for directory, entries in started.listed:
        rows: list[tuple[Path, FolderScan | None, Receipt | None, LinkInfo | None]] = []
        for entry in entries:
            info = started.links.get(entry)
            if info is not None and info.target is None:
                rows.append((entry, None, None, info))
            else:
                folder_scan, receipt = next(scans)
                rows.append((entry, folder_scan, receipt, info))
        found.append((directory, rows))
    names = {f.name for _, rows in found for f, _, _, _ in rows}
    names |= {r.name for _, rows in found for _, _, r, _ in rows if r is not None}
    digests = {s.digest for _, rows in found for _, s, _, _ in rows if s is not None}
    digests |= {r.digest for _, rows in found for _, _, r, _ in rows if r is not None}
    skills = [] if store is None else stored_skills(store, policy, names, digests, manifests=False)
    states = _classify_all(found, skills, wanted)
    # Only a folder that is no stored bundle is compared file by file with the bundle it should
    # be: only those manifests are read (and the folders judged again, now with them).
    needed = {s.expected for s in states if s.state == "modified" and s.expected}
    if needed and store is not None:
        manifests = store.bundle_files_of(needed)
        skills = [
            replace(s, files=tuple(manifests[s.digest])) if s.digest in manifests else s
            for s in skills
        ]
        states = _classify_all(found, skills, wanted)
        _name_eve_rewrites(store, states, skills)
    if store is None:
        for state in states:
            if state.state == "unknown" and state.detail == "not in the store":
                state.detail = "no store yet (chimera-cards adopt, or import it)"
    if pins is not None:
        states += _against_pins(states, pins)
    if npx_lock is not None:
        targets = {
            str(entry): (info.target if info is not None else entry)
            for _, rows in found
            for entry, _, _, info in rows
            if info is None or info.target is not None
        }
        explained = _npx_explained(store, npx_lock) if store is not None else {}
        states += _against_npx_lock(states, npx_lock, targets, explained)
    return CheckReport(states)


def _name_eve_rewrites(store, states: list[SkillState], skills: list[StoredSkill]) -> None:
    """Say so where a modified folder differs from its approved bundle only by npx's rewrite of
    SKILL.md for Eve: still modified (Eve reads bytes nobody approved), but named, not left to
    look like an edit."""
    bundles = {s.digest: s.files for s in skills}
    for state in states:
        diff = state.diff
        if state.state != "modified" or diff is None or not state.expected:
            continue
        if diff.added or diff.removed or diff.mode_changed or list(diff.changed) != ["SKILL.md"]:
            continue
        approved = next((f for f in bundles.get(state.expected, ()) if f.path == "SKILL.md"), None)
        try:
            copy = (Path(state.path) / "SKILL.md").read_bytes()
        except OSError:
            continue
        original = None if approved is None else store.get_blob(approved.sha256)
        from chimera_cards._install.adopt import eve_skill_md  # only for such a folder

        if original is not None and eve_skill_md(original, copy):
            state.detail += (
                " (npx's rewrite of SKILL.md for Eve: frontmatter re-serialised, keys Eve "
                "ignores dropped; not the approved bytes)"
            )


def _npx_explained(store, lock: Mapping[str, object]) -> dict[str, str]:
    """bundle digest -> the computedHash npx recorded for it, for each version ``adopt`` found
    to differ from that hash only by what npx leaves out of its copy (vercel-labs/skills#806),
    having read the source npx hashed."""
    out: dict[str, str] = {}
    for name in lock:
        for version in store.versions(name=name):
            source = version.source if isinstance(version.source, dict) else {}
            recorded = source.get("recorded")
            if not isinstance(recorded, dict) or recorded.get("kind") != "npx-adopt":
                continue
            locked = recorded.get("lock")
            computed = locked.get("computedHash") if isinstance(locked, dict) else None
            if recorded.get("quirk") and isinstance(computed, str) and version.digest:
                out[version.digest] = computed
    return out


def _against_pins(states: list[SkillState], pins: Mapping[str, str]) -> list[SkillState]:
    """Judge each folder against the lockfile's pins; the pins no folder holds, as missing."""
    for state in states:
        pin = pins.get(state.name)
        if pin is None and state.state != "missing":
            state.state = "unpinned"
            state.detail = "not in the lockfile" + (f" ({state.detail})" if state.detail else "")
        elif state.ok and pin is not None and pin != state.digest:
            state.state = "modified"
            state.detail = f"not the bundle the lockfile pins ({pin[:12]})"
    held = {s.name for s in states}
    return [
        SkillState(
            name=name, path="", state="missing", detail="in the lockfile; in none of these folders"
        )
        for name in pins
        if name not in held
    ]


def _against_npx_lock(
    states: list[SkillState],
    lock: Mapping[str, object],
    targets: Mapping[str, Path],
    explained: Mapping[str, str] | None = None,
) -> list[SkillState]:
    """Compare each folder named in npx's lock with its computedHash; the entries of the lock
    that have no folder, as missing states."""
    from chimera_cards._bundles.digests import npx_hash_folder  # only with --lockfile
    from chimera_cards._bundles.folderscan import RECEIPT_NAME

    seen = set()
    for state in states:
        entry = lock.get(state.name)
        target = targets.get(state.path)
        if entry is None or target is None or state.state == "missing":
            continue
        seen.add(state.name)
        expected = getattr(entry, "computed_hash", None)
        if expected is None:
            continue
        try:
            actual = npx_hash_folder(target, leave_out=(RECEIPT_NAME,))
        except OSError:
            actual = None
        state.npx_hash = "matches" if actual == expected else "differs"
        if (
            actual != expected
            and state.ok
            and (explained or {}).get(state.digest or "") == expected
        ):
            state.npx_hash = "explained"  # npx's own copy of what it hashed, less what it drops
            state.detail = "npx left files out of its copy (vercel-labs/skills#806), as adopted"
            continue
        if actual != expected and state.state == "ok":
            state.state = "modified"
            state.detail = "files differ from the computedHash in skills-lock.json"
    return [
        SkillState(
            name=name,
            path="",
            state="missing",
            detail="in skills-lock.json; in none of these folders",
        )
        for name in lock
        if name not in seen and not any(s.name == name for s in states)
    ]


def _classify_all(
    found: list, skills: list[StoredSkill], only: frozenset[str] | None = None
) -> list[SkillState]:
    by_digest: dict[str, list[Candidate]] = {}
    for skill in skills:
        by_digest.setdefault(skill.digest, []).append(skill.candidate())
    by_name = _by_name(skills)
    states = []
    for directory, rows in found:
        seen = set()
        for entry, scan, receipt, info in rows:
            seen.add(entry.name)
            if scan is None:
                states.append(link_state(entry, info.shown or info.link, info.describe()))
                continue
            state = classify(entry, scan, receipt, by_digest, by_name)
            if info is not None:
                state.link = info.shown
            states.append(state)
        for name, recorded in sorted(read_index(directory).items()):
            if name not in seen and (only is None or name in only):
                states.append(missing_state(directory, name, recorded))
    return states
