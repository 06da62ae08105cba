"""The state of an installed skill against the store: current, changed, missing, foreign."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from chimera_cards._bundles.manifest import BundleFile
from chimera_cards._install.receipt import FolderScan, Receipt
from chimera_cards._util.records import asdict, field, record

TYPE_CHECKING = False  # typing is not imported at run time: check starts up on this module
if TYPE_CHECKING:
    from chimera_cards._bundles.bundle import BundleDiff

# -- what a folder's bytes mean ----------------------------------------------------------------


@record(frozen=True)
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


@record
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
    link: str | None = None  # the folder is a link: where it leads (inside: relative to it)
    # "matches" | "differs" | "explained" (by npx's own quirk, as adopt found): against
    # skills-lock.json's computedHash
    npx_hash: str | None = None

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    def to_dict(self) -> dict:
        data = asdict(self)
        data["diff"] = self.diff.to_dict() if self.diff is not None else None
        return data

    def line(self) -> str:
        text = f"{self.state:<8} {self.name}"
        if self.link is not None:
            text += f" -> {self.link}"
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
    from chimera_cards._bundles.bundle import diff_bundles  # only for a folder that differs

    diff = diff_bundles(reference.files, scan.files)
    base.state, base.diff, base.expected = "modified", diff, reference.digest
    base.detail = describe_diff(diff, scan.problems) or "differs from the installed bundle"
    return base


def link_state(entry: Path, shown: str, why: str) -> SkillState:
    """The line for a link that is not read: it leaves the project, or leads to no folder."""
    return SkillState(name=entry.name, path=str(entry), state="unknown", detail=why, link=shown)


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
