"""``plan_sync``/``apply_sync``: bring installed folders in line with the store."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from chimera_cards._install.disk import (
    _hidden,
    check_name,
    is_our_link,
    refuse_foreign,
    remove_skill,
    write_skill,
)
from chimera_cards._install.folderlock import serialized
from chimera_cards._install.installer import approved_in_place
from chimera_cards._install.policy import NotApprovedError, installable, load_bundle, stored_skills
from chimera_cards._install.receipt import ForeignFolderError, record_installs
from chimera_cards._install.state import SkillState
from chimera_cards._install.verify import check


@dataclass
class SyncAction:
    """One line of ``sync``'s plan: what to do with one skill, and why."""

    name: str
    action: str  # "install" | "replace" | "remove" | "keep" | "skip" | "unmet"
    reason: str = ""
    digest: str | None = None  # the bundle to write (install/replace)
    # A lockfile's pin that this sync cannot meet, and why in one word: absent, pending,
    # downgrade, rejected, retired, expired, unapproved, foreign, link; or a folder the lockfile
    # does not pin that this sync may not remove: unpinned ("" when the lock is met).
    unmet: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        text = f"{self.action:<8} {self.name}"
        if self.digest and self.action in ("install", "replace"):
            text += f" {self.digest[:12]}"
        reason = f"{self.unmet}: {self.reason}" if self.unmet else self.reason
        return f"{text}  {reason}" if reason else text


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

    A lockfile is a contract and the whole set: every pin it cannot meet is an action with
    ``unmet`` set to why, in one word, and a reason that is true for it (a folder installed for
    that name stays if its bytes are still usable, and goes if they are revoked); a folder it
    does not pin is removed when this tool installed it, else unmet (``unpinned``: a folder this
    tool did not make is never deleted). The caller fails when any is unmet, so a sync that
    succeeds leaves the folder holding exactly the lock.

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
        state = present.get(str(directory / name))
        if pins is not None:
            actions[name] = _plan_pin(store, directory, name, digest, state, skills)
        else:
            actions[name] = _plan_one(directory, name, digest, state, skills)
    for state in report.states:
        if state.name in actions or Path(state.path).name in actions:
            continue
        if pins is not None:
            # A lockfile is the whole set: what it does not pin goes, as npm ci would have it.
            actions[state.name] = _unpinned(directory, state)
        elif state.installed and state.state == "revoked":
            folder = Path(state.path).name
            actions[state.name] = _removal(directory, folder, f"revoked: {state.detail}")
        elif state.installed and state.state == "missing":
            actions[state.name] = SyncAction(state.name, "remove", "folder is gone; forget it")
    return [actions[n] for n in sorted(actions)]


def _plan_one(
    directory: Path, name: str, digest: str | None, state: SkillState | None, skills: list
) -> SyncAction:
    """The action for one wanted name: exactly what ``apply_sync`` can then do."""
    try:
        skill = installable(skills, name, digest)
    except NotApprovedError as exc:
        if state is not None and state.installed and state.state != "missing":
            return _removal(directory, name, f"not usable: {exc}")
        return SyncAction(name, "skip", str(exc))
    if state is not None and state.link is not None:
        # The bytes are the link's target: sync that folder, never write through a link.
        if state.state == "ok" and state.digest == skill.digest:
            return SyncAction(name, "keep", f"-> {state.link}", skill.digest)
        if is_our_link(directory, name):
            return SyncAction(name, "skip", f"a link to {state.link}; sync that folder")
        return SyncAction(name, "skip", f"a link chimera-cards did not make (-> {state.link})")
    if state is None or state.state == "missing":
        obstacle = _obstacle(directory, name)
        if obstacle:
            return SyncAction(name, "skip", obstacle)
        return SyncAction(name, "install", "", skill.digest)
    if not state.installed:
        if state.state != "ok":
            return SyncAction(name, "skip", "folder was not installed by chimera-cards")
        # Its bytes are an approved bundle (adopted, or copied by hand): ours to keep or
        # replace, however it got there.
        if state.digest == skill.digest:
            return SyncAction(name, "keep", "an approved bundle already", skill.digest)
        return SyncAction(name, "replace", "upgraded (an approved bundle before)", skill.digest)
    if state.state == "ok" and state.digest == skill.digest:
        return SyncAction(name, "keep", "", skill.digest)
    why = "upgraded" if state.state in ("ok", "revoked") else state.state
    return SyncAction(name, "replace", why, skill.digest)


def _plan_pin(
    store, directory: Path, name: str, digest: str | None, state: SkillState | None, skills: list
) -> SyncAction:
    """The action for one pin of a lockfile; an unmet pin says why (``SyncAction.unmet``)."""
    try:
        installable(skills, name, digest, store=store)
    except NotApprovedError as exc:
        if state is not None and state.installed and state.state == "revoked":
            action = _removal(directory, name, str(exc))  # its bytes may not be used: they go
        else:
            action = SyncAction(name, "unmet", str(exc))
        action.unmet = exc.kind
        return action
    action = _plan_one(directory, name, digest, state, skills)
    if action.action == "skip":  # something in the way that this sync may not replace
        kind = "link" if "link" in action.reason else "foreign"
        return SyncAction(
            name,
            "unmet",
            f"{directory / name}: {action.reason}; move it away (or install it with --force)",
            action.digest,
            unmet=kind,
        )
    return action


def _unpinned(directory: Path, state: SkillState) -> SyncAction:
    """A folder the lockfile does not pin: removed when this tool installed it, else unmet (a
    folder it did not make is never deleted: the user moves it away)."""
    folder = Path(state.path).name
    if state.state == "missing":
        return SyncAction(state.name, "remove", "not in the lockfile; folder is gone; forget it")
    if state.installed:
        action = _removal(directory, folder, "not in the lockfile")
        if action.action == "remove":
            return action
    return SyncAction(
        state.name,
        "unmet",
        f"{directory / folder}: not in the lockfile, and chimera-cards did not install it; "
        "move it away (or pin it)",
        unmet="unpinned",
    )


def _obstacle(directory: Path, name: str) -> str:
    """Why writing ``directory/name`` would be refused (what ``write_skill`` refuses), or ""."""
    target = directory / name
    if not target.is_symlink() and target.exists() and not target.is_dir():
        return "a file is in the way"
    try:
        refuse_foreign(directory, name)
    except ForeignFolderError:
        if target.is_symlink():
            return "a link chimera-cards did not make is in the way"
        return "folder was not installed by chimera-cards"
    return ""


def _removal(directory: Path, name: str, why: str) -> SyncAction:
    """A removal, or a skip when ``remove_skill`` would refuse it (a link we did not make)."""
    target = directory / name
    if target.is_symlink() and not is_our_link(directory, name):
        return SyncAction(name, "skip", f"{why}; a link chimera-cards did not make")
    return SyncAction(name, "remove", why)


@serialized()
def apply_sync(store, directory: str | os.PathLike, plan: Iterable[SyncAction]) -> list[SyncAction]:
    """Carry out a plan from ``plan_sync`` (installs first, then removals), holding the
    folder's lock (hold it around ``plan_sync`` too, so the plan is of what is there).

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
                    # Planned over a folder without our receipt only when its bytes were an
                    # approved bundle: ours then, and checked again just before it is replaced.
                    force=action.action == "replace"
                    and approved_in_place(store, directory, action.name),
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
