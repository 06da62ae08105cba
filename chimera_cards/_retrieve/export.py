"""Export: write a card's exact bytes out of the store, only for a version the gate passes."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chimera_cards._bundles.bundle import (
    SKILL_FILE,
    Bundle,
)
from chimera_cards._store.facade import Store
from chimera_cards._store.rows import Version
from chimera_cards._store.verify import resolve_hook
from chimera_cards._store.versions import check_storable_name
from chimera_cards._util.atomic import WriteError
from chimera_cards.errors import (
    LinkEscapeError,
    UnapprovedExportError,
    UnknownCardError,
    UnknownVersionError,
    UnsafeTargetError,
)

# Run by export_card after it writes SKILL.md, as "module:function" called
# fn(store, name, sha256, card_dir) -> Path | None (a file written beside the card, e.g. approvals).
# Review: the card's signed statements go beside it as approvals.jsonl.
EXPORT_HOOKS: tuple[str, ...] = ("chimera_cards._review.statements:write_statements",)


# -- export ---------------------------------------------------------------------------------


@dataclass
class ExportResult:
    """What ``export_card`` wrote, and where."""

    name: str
    sha256: str
    status: str
    path: str  # DIR/NAME/SKILL.md
    files: list[str] = field(default_factory=list)  # anything EXPORT_HOOKS wrote beside it
    digest: str = ""  # the bundle digest
    bundle_files: list[str] = field(default_factory=list)  # every file of the bundle written

    def to_dict(self) -> dict:
        return asdict(self)


def select_version(store: Store, name: str, sha_prefix: str | None = None) -> Version:
    """``sha_prefix`` given: that version. Otherwise the active one, else the newest."""
    if sha_prefix:
        return store.find_version(name, sha_prefix)
    found = store.versions(name=name)
    if not found:
        raise UnknownCardError(f"no card named {name!r} in the store")
    return store.active(name) or found[-1]


def _choose_export_version(store: Store, name: str, sha_prefix: str | None) -> Version:
    if sha_prefix:
        return store.find_version(name, sha_prefix)
    version = store.active(name)
    if version is None:
        others = store.versions(name=name)
        if not others:
            raise UnknownCardError(f"no card named {name!r} in the store")
        listed = ", ".join(f"{v.sha256[:12]} {v.status}" for v in others)
        raise UnknownVersionError(
            f"{name} has no active version ({listed}); pass --version SHA --unapproved"
        )
    return version


def _check_export_target(target: Path) -> None:
    """Refuse to write through a symlink, or to replace anything but a skill folder (or an
    empty folder): the export stays inside the folder the user named."""
    if target.is_symlink():
        raise LinkEscapeError(f"{target} is a symlink; refusing to write through it")
    if target.exists() and not target.is_dir():
        raise UnsafeTargetError(f"{target}: exists and is not a folder; refusing to write there")
    if target.is_dir() and any(target.iterdir()):
        skill = target / SKILL_FILE
        if skill.is_symlink() or (skill.exists() and not skill.is_file()):
            raise LinkEscapeError(
                f"{skill}: exists and is not a regular file; refusing to replace it"
            )
        if not skill.is_file():
            raise UnsafeTargetError(
                f"{target}: exists and is not a skill folder (no {SKILL_FILE}); refusing to "
                "replace it"
            )


def write_bundle_dir(bundle: Bundle, staging: Path) -> None:
    """Write every file of ``bundle`` under the new folder ``staging`` (executable bit kept)."""
    for f in bundle.files:
        target = staging.joinpath(*f.path.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755 if f.executable else 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(bundle.contents[f.path])
        os.chmod(target, 0o755 if f.executable else 0o644)  # the umask must not drop the bit


def export_card(
    store: Store,
    name: str,
    directory: str | os.PathLike,
    *,
    sha_prefix: str | None = None,
    unapproved: bool = False,
) -> ExportResult:
    """Write the whole bundle of ``name`` to ``directory/name/``, byte-identical, exec bits kept,
    plus ``approvals.jsonl`` (``EXPORT_HOOKS``).

    Without ``sha_prefix`` the active version is exported. Only a version the gate passes now
    (approved, or a clean local import) is written unless ``unapproved``: exporting "the skill"
    must not quietly hand out a pending or rejected one. Every file is re-hashed first, and the
    folder is built beside the target and renamed into place, so the target holds the old
    folder or the new one, never a mix.

    Args:
        store: the open store.
        name: the skill's name.
        directory: the parent folder; the skill goes to ``directory/name``.
        sha_prefix: a version's hash (or its first 6+ hex digits) instead of the active one.
        unapproved: allow a version the gate does not pass (pending, rejected, retired).
    Returns:
        What was written.
    """
    from chimera_cards._retrieve.gate import gate_version  # the gate loads trust (cryptography)

    with store.snapshot():
        version = _choose_export_version(store, name, sha_prefix)
        check_storable_name(version.name)
        bundle = store.get_bundle(version)  # tampered bytes are refused whatever the status
        if not unapproved:
            decision = gate_version(store, version)
            if not decision.ok:
                raise UnapprovedExportError(
                    f"{version.name} {version.sha256[:12]} is not approved "
                    f"({version.status}: {decision.reason}); pass --unapproved to export it anyway"
                )
    import shutil  # with tempfile: only for an export, not every command
    import tempfile

    parent = Path(directory)
    target = parent / version.name
    _check_export_target(target)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{version.name}.", dir=parent))
    except OSError as exc:
        raise WriteError(f"cannot write {parent}: {exc.strerror or exc}") from None
    old = None
    try:
        write_bundle_dir(bundle, staging)
        extras = []
        for spec in EXPORT_HOOKS:
            written = resolve_hook(spec)(store, version.name, version.sha256, staging)
            if written:
                extras.append(Path(written).name)
        staging.chmod(0o755)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{version.name}.old.", dir=parent))
            os.rename(target, old / "x")
        os.rename(staging, target)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if old is not None and not target.exists():
            os.rename(old / "x", target)
        if isinstance(exc, OSError):
            raise WriteError(f"cannot write {target}: {exc.strerror or exc}") from None
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return ExportResult(
        name=version.name,
        sha256=version.sha256,
        status=version.status,
        path=str(target / SKILL_FILE),
        files=[str(target / n) for n in extras],
        digest=version.digest,
        bundle_files=[f.path for f in bundle.files],
    )


def approved_bundle(store: Store, name: str) -> tuple[Version, Bundle] | None:
    """The bundle of ``name`` an agent may be given now, or None.

    That is the active version, if the gate passes it on this very call (its approvals
    verify against today's trust list and threshold, or it is a clean local import) and
    every one of its files re-hashes to the manifest.

    Args:
        store: the open store.
        name: the skill's name.
    Returns:
        (version, bundle), or None when there is no active version or the gate refuses it.
    """
    from chimera_cards._retrieve.gate import gate_version  # the gate loads trust (cryptography)

    with store.snapshot():
        version = store.active(name)
        if version is None:
            return None
        decision = gate_version(store, version)
        if not decision.ok:
            return None
        return version, store.get_bundle(version)
