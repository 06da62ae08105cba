"""``install``: write approved skills into agent folders."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from chimera_cards._bundles.bundle import (
    Bundle,
    diff_bundles,
)
from chimera_cards._bundles.folderscan import (
    idle_core,
)
from chimera_cards._install.disk import (
    _hidden,
    _write_all,
    check_name,
    refuse_foreign,
    write_link,
    write_skill,
)
from chimera_cards._install.folderlock import serialized
from chimera_cards._install.policy import StoredSkill, installable, load_bundles, stored_skills
from chimera_cards._install.receipt import (
    InstallError,
    Receipt,
    read_receipt,
    record_installs,
    scan_folder,
)
from chimera_cards._install.state import describe_diff


class LocalEditsError(InstallError):
    """A folder this tool installed was changed since: installing over it would lose that."""


@dataclass
class InstallResult:
    """What ``install`` did with one name, and where."""

    name: str
    digest: str
    path: str
    action: str  # "installed" | "replaced" | "unchanged" | "linked" | "relinked"
    link: str | None = None  # a link's text, when this is a link to the canonical copy

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
        force: replace folders this tool did not install, and installed folders whose files
            were changed since (local edits are then lost).
    Returns:
        One InstallResult per name.
    Raises:
        NotApprovedError: a name has no usable version.
        ForeignFolderError: a folder is in the way and ``force`` is false.
        LocalEditsError: an installed folder holds changes and ``force`` is false (the files
            that would be lost are named).
    """
    directory = Path(directory)
    names = list(dict.fromkeys(names))
    for name in names:
        check_name(name)
    skills = stored_skills(store, names=names, manifests=False)  # load_bundle reads each one
    chosen = [installable(skills, name) for name in names]
    bundles = load_bundles(store, chosen)
    on_disk: dict[str, str] = {}  # name -> digest of the installed folder, when scanned here
    owned: set[str] = set()  # folders without our receipt whose bytes are an approved bundle
    for skill, bundle in zip(chosen, bundles, strict=True):
        if force:
            break
        if approved_in_place(store, directory, skill.name):
            owned.add(skill.name)
            continue
        refuse_foreign(directory, skill.name)
        target = directory / skill.name
        if target.is_symlink() or not target.exists():
            continue
        receipt = read_receipt(target)
        if receipt is None:
            continue
        digest, lost = local_edits(store, target, receipt, bundle.digest)
        if lost:
            raise LocalEditsError(
                f"{target}: changed since it was installed ({lost}); installing would lose "
                "that — pass --force to replace it"
            )
        on_disk[skill.name] = digest
    jobs = list(zip(chosen, bundles, strict=True))
    done = _write_jobs(directory, jobs, str(store.path), force, on_disk, frozenset(owned))
    return [
        InstallResult(skill.name, bundle.digest, str(directory / skill.name), done[index][0])
        for index, (skill, bundle) in enumerate(jobs)
    ]


@serialized()
def _write_jobs(
    directory: Path,
    jobs: list[tuple[StoredSkill, Bundle]],
    store_path: str,
    force: bool,
    on_disk: dict[str, str] | None = None,
    owned: frozenset[str] = frozenset(),
) -> dict[int, tuple[str, dict | None]]:
    """Write every chosen bundle and record them in the index, holding the folder's lock
    (taken only now: a refused install must not even create the folder)."""
    hidden = _hidden(directory)  # leftovers of a crashed run are there before this one starts
    done: dict[int, tuple[str, dict | None]] = {}
    mine = list(range(len(jobs)))
    child = None
    if len(jobs) >= _FORK_MIN_SKILLS and sys.platform.startswith("linux") and idle_core():
        half = len(jobs) // 2
        child = _Writer(jobs, mine[half:], directory, store_path, force, hidden, owned)
        mine = mine[:half]
    try:
        for index in mine:
            mine_force = force or jobs[index][0].name in owned
            done[index] = _install_one(
                directory, *jobs[index], store_path, mine_force, hidden, on_disk
            )
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
    return done


# From this many skills on, with an idle core, a forked child writes half of them.
_FORK_MIN_SKILLS = 32


def approved_in_place(store, directory: str | os.PathLike, name: str) -> bool:
    """Whether ``directory/name`` is a folder without our receipt whose bytes are a stored
    bundle of that name that passes the gate now, as ``check`` calls ``ok``: whoever put it
    there (``npx skills``, adopted; a copy by hand), it is ours to replace. A link is not (it
    is replaced only with ``--force``, or kept by ``sync`` when it leads to the approved bytes).

    Args:
        store: the open store.
        directory: a skills directory.
        name: the skill folder's name.
    """
    target = Path(directory) / name
    if target.is_symlink() or not target.is_dir():
        return False
    if read_receipt(target) is not None:
        return False  # ours already: the usual rules (local edits) apply
    from chimera_cards._install.verify import check  # only for a folder in the way

    states = [s for s in check(store, [directory]).states if s.name == name]
    return len(states) == 1 and states[0].ok and not states[0].installed


def local_edits(store, target: Path, receipt: Receipt, wanted: str) -> tuple[str, str]:
    """What the user changed in an installed folder since ``install`` wrote it.

    Args:
        store: the open store (for the manifest of the bundle the receipt names).
        target: the installed folder.
        receipt: its receipt.
        wanted: the digest about to be installed (a folder already holding it has nothing to
            lose).
    Returns:
        (the folder's digest, the changes as ``changed a; added b``, or "" when none).
    """
    scan = scan_folder(target)
    if scan.digest == wanted or (scan.digest == receipt.digest and not scan.problems):
        return scan.digest, ""
    installed = store.bundle_files(receipt.digest)
    if not installed:  # the receipt's bundle is not in this store: say what differs from it
        return scan.digest, "; ".join(scan.problems) or "its files differ from the receipt's"
    lost = describe_diff(diff_bundles(installed, scan.files), scan.problems)
    return scan.digest, lost or "its files differ from what was installed"


def _install_one(
    directory: Path,
    skill: StoredSkill,
    bundle: Bundle,
    store: str,
    force: bool,
    hidden: list,
    on_disk: dict[str, str] | None = None,
) -> tuple[str, dict | None]:
    """Write one chosen bundle (unless exactly it is there): (action, its index entry or None).

    ``on_disk`` holds the digests of folders ``install`` already hashed (not hashed twice)."""
    target = directory / skill.name
    is_link = target.is_symlink()  # a link is replaced by the folder, whatever it leads to
    receipt = read_receipt(target) if target.is_dir() and not is_link else None
    if receipt is not None:
        current = (on_disk or {}).get(skill.name) or scan_folder(target).digest
        if current == bundle.digest:
            return "unchanged", None
    action = "replaced" if is_link or target.exists() else "installed"
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
        owned: frozenset[str] = frozenset(),
    ) -> None:
        import marshal  # a format for this pipe between two copies of one program

        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read_end)
                for index in indices:
                    forced = force or jobs[index][0].name in owned
                    found = _install_one(directory, *jobs[index], store, forced, hidden)
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


def install_linked(
    store,
    names: Iterable[str],
    directories: Iterable[str | os.PathLike],
    canonical: str | os.PathLike,
    *,
    force: bool = False,
) -> list[InstallResult]:
    """Install npx's way: one copy of each skill in ``canonical``, and in every other
    directory a relative link to it.

    Args:
        store: an open Store.
        names: skill names.
        directories: the agents' skills folders (one of them may be ``canonical`` itself).
        canonical: where the one copy goes (``.agents/skills``, or ``~/.agents/skills``).
        force: replace folders and links this tool did not make.
    Returns:
        The copies' results, then one per link.
    Raises:
        NotApprovedError, ForeignFolderError: as ``install``; nothing is written then.
    """
    canonical = Path(canonical)
    names = list(dict.fromkeys(names))
    others = []
    seen = {os.path.realpath(canonical)}
    for directory in directories:
        if os.path.realpath(directory) not in seen:
            seen.add(os.path.realpath(directory))
            others.append(Path(directory))
    if not force:  # every link's place is checked before the copies are written
        for directory in others:
            for name in names:
                check_name(name)
                refuse_foreign(directory, name)
    copies = install(store, names, canonical, force=force)
    results = list(copies)
    for directory in others:
        for result in copies:
            action, entry = write_link(
                directory, result.name, canonical / result.name, digest=result.digest, force=force
            )
            results.append(
                InstallResult(
                    result.name, result.digest, str(directory / result.name), action, entry["link"]
                )
            )
    return results
