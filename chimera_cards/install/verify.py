"""``check``: compare installed folders with what the store approves now."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace

from chimera_cards.bundles.folderscan import (
    Scan,
    start_scan,
)
from chimera_cards.errors import UsageError
from chimera_cards.install.policy import Policy, StoredSkill, stored_skills
from chimera_cards.install.receipt import Receipt, _folder_scan, read_index
from chimera_cards.install.state import Candidate, SkillState, classify, missing_state

__all__ = ["CheckReport", "check"]


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
