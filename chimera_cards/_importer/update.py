"""Re-fetch skills from where they came from: ``update`` imports what changed (as a new pending,
tainted version, like any network import) and ``outdated`` only reports it.

A version records its origin (a URL, an archive URL, a git remote and ref, or a path). Fetching it
again goes through the importer exactly as the first import did, so every check, limit and
provenance rule applies unchanged; ``outdated`` imports into a throwaway store in a temporary
folder and compares, so it never writes to the real one. Something is outdated when the origin
now holds bytes that the store does not have for that name.

An origin that goes back to bytes this store holds but does not use is reported, never taken:
``downgrade`` when they are older than what the name has been (retired, or held as a downgrade
by their signed history), ``rejected`` when a trusted reviewer rejected them. Both exit 1.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from chimera_cards._bundles.bundle import bundle_from_files
from chimera_cards._bundles.digests import npx_copied
from chimera_cards._bundles.folderscan import read_receipt_bytes
from chimera_cards._importer.pipeline import ImportResult, import_source
from chimera_cards._store.facade import Store
from chimera_cards._store.rows import Version
from chimera_cards.errors import ChimeraError


class UnknownSkillError(ChimeraError):
    """``update``/``outdated`` named a skill the store does not hold."""


class NoUpstreamError(ChimeraError):
    """A version whose only known source is an installed copy of it (a folder ``adopt`` found
    with no source recorded by npx, or one holding chimera-cards' install receipt): re-reading
    it would take a local edit for an upstream change, so it has nothing to update from."""


@dataclass
class UpdateResult:
    """One name and what its origin holds now."""

    name: str
    origin: str
    # "current" | "changed" | "imported" | "downgrade" | "rejected" | "expired" | "error"
    # | "no-source" (its only known source is an installed copy: nothing to update from)
    state: str
    stored: str  # identity (bundle digest or SHA-256) of the version compared with
    upstream: str | None = None  # identity of what the origin holds now
    status: str | None = None  # status of the imported version (update)
    detail: str = ""
    results: list[dict] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.state in ("changed", "imported")

    @property
    def refused(self) -> bool:
        """The origin serves bytes that must not be used: a downgrade, a rejection, or the
        version in use with its approvals expired (a frozen channel)."""
        return self.state in ("downgrade", "rejected", "expired")

    def to_dict(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        text = f"{self.state:<8} {self.name}  {self.origin}"
        if self.upstream and (self.changed or self.refused):
            text += f"  {self.stored[:12]} -> {self.upstream[:12]}"
        if self.status:
            text += f" ({self.status})"
        return f"{text}  {self.detail}" if self.detail else text


def _identity(item: Version | ImportResult) -> str:
    # Bundles are compared by digest where the store records one; single files by SHA-256.
    return getattr(item, "digest", None) or item.sha256 or ""


def origins(store: Store, names: Iterable[str] | None = None) -> list[tuple[str, Version]]:
    """The version whose origin each name is re-fetched from: the active one, else the newest.

    Args:
        store: an open Store.
        names: only these (default: every name in the store).
    Returns:
        (name, version) pairs, sorted by name.
    Raises:
        UnknownSkillError: a name is not in the store.
    """
    wanted = list(dict.fromkeys(names)) if names else store.names()
    out = []
    for name in wanted:
        versions = store.versions(name=name)
        if not versions:
            raise UnknownSkillError(f"no skill named {name!r} in the store")
        out.append((name, store.active(name) or versions[-1]))
    return sorted(out)


def _options(timeout: float | None) -> dict[str, Any]:
    return {} if timeout is None else {"timeout": timeout}


def in_agent_folder(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` sits where agents load skills from: below a ``skills`` folder whose
    parent is hidden (``.claude/skills/x``, ``~/.codex/skills/.system/x``), or one below
    ``.config`` (``~/.config/agents/skills/x``) or below a hidden folder's ``extensions`` or
    ``plugins`` (``.gemini/extensions/e/skills/x``, a Claude Code plugin cache), as written or
    with links resolved. Bytes read there are an installed copy, whatever put them there, so
    they are never an upstream; an authoring folder (``repo/skills/x``) is."""
    for form in (os.path.abspath(folder), os.path.realpath(folder)):
        parts = Path(form).parts
        for i, part in enumerate(parts[:-1]):
            if part != "skills" or i == 0:
                continue
            above = parts[:i]
            if above[-1].startswith(".") or ".config" in above:
                return True
            hidden = [j for j, p in enumerate(above) if p.startswith(".") and p != "."]
            if hidden and {"extensions", "plugins"} & set(above[hidden[0] :]):
                return True
    return False


def refetch_args(version: Version) -> tuple[str, dict[str, Any]]:
    """Where and how to fetch ``version``'s skill again, from what its import recorded.

    A git import records the remote and the ref asked for (re-resolved now, so a branch moves
    on; a commit stays put); an archive or repository may hold several skills, so the name
    picks this one. Versions stored before sources were recorded re-fetch their origin.

    Returns:
        (source, keyword arguments for ``import_source``).
    """
    info = version.source if isinstance(version.source, dict) else {}
    recorded = info.get("recorded")
    if isinstance(recorded, dict) and recorded.get("kind") == "npx-adopt":
        # Adopted: the folder read was an installed copy; npx's source is where updates are.
        up = recorded.get("upstream")
        if not isinstance(up, dict) or not isinstance(up.get("source"), str):
            raise NoUpstreamError(
                f"adopted from the installed copy {info.get('path') or version.origin} with no "
                "source recorded by npx; an edit there is drift (chimera-cards check shows it), "
                "not an update"
            )
        extra: dict[str, Any] = {"skill": str(up.get("skill") or version.name)}
        if up.get("ref"):
            extra["ref"] = str(up["ref"])
        if up.get("path"):
            extra["path"] = str(up["path"])
        if up.get("taint"):
            extra["taint"] = True
        return str(up["source"]), extra
    kind = info.get("kind")
    if kind in ("folder", "file") and info.get("path"):
        folder = str(info["path"]) if kind == "folder" else os.path.dirname(str(info["path"]))
        if read_receipt_bytes(folder) is not None:
            raise NoUpstreamError(
                f"{folder} is a copy chimera-cards installed (it holds the install receipt); "
                "an edit there is drift (chimera-cards check shows it), not an update"
            )
        if in_agent_folder(folder):
            raise NoUpstreamError(
                f"{folder} is in a folder agents load skills from (imported where it is "
                "used); an edit there is drift (chimera-cards check shows it), not an update: "
                "import it again to take the edit after reading it"
            )
    if kind == "git" and info.get("url"):
        return str(info["url"]), {"ref": info.get("ref"), "skill": version.name}
    if kind == "archive" and info.get("url"):
        return str(info["url"]), {"skill": version.name}
    if kind in ("folder", "file") and info.get("path"):
        return str(info["path"]), {}
    if kind == "url" and info.get("url"):
        return str(info["url"]), {}
    if kind == "wellknown" and info.get("url"):
        return str(info["url"]), {"skill": info.get("skill") or version.name}
    return version.origin, {}


def _stored_identities(store: Store, name: str) -> set[str]:
    return {_identity(v) for v in store.versions(name=name)}


def _going_back(store: Store, name: str, identity: str) -> tuple[str, str] | None:
    """(state, detail) when the stored version of ``name`` with ``identity`` is one the origin
    must not move the name to: rejected, retired, or held as older by its signed history."""
    from chimera_cards._review.supersession import standing  # signatures: only for this check
    from chimera_cards._trust.policy import get_threshold, trusted_keys

    mine = [v for v in store.versions(name=name) if _identity(v) == identity]
    if not mine:
        return None
    version = mine[-1]
    if version.status == "rejected":
        why = f": {version.reason}" if version.reason else ""
        return "rejected", f"the origin serves {version.sha256[:12]}, rejected{why}"
    active = store.active(name)
    if version.status == "retired" and active is not None:
        return "downgrade", (
            f"the origin went back to {version.sha256[:12]} ({version.reason or 'retired'}); "
            f"{active.sha256[:12]} stays active"
        )
    if version.status == "pending":
        place = standing(store, version, trusted_keys(store), get_threshold(store))
        if place.older:
            return "downgrade", place.reason()
    if version.status == "active":
        # A frozen channel: the origin still serves the version in use, but its approvals have
        # expired, so it is no longer served here; only a reviewer can renew it.
        from chimera_cards._retrieve.gate import gate_version

        decision = gate_version(store, version)
        if not decision.ok and "expired" in decision.reason:
            return "expired", (
                f"{version.sha256[:12]} is what the origin still serves, but {decision.reason}; "
                f"a reviewer must approve it again (chimera-cards approve {name} "
                f"--digest {version.sha256})"
            )
    return None


def _compare(
    store: Store, name: str, version: Version, results: list[ImportResult]
) -> UpdateResult:
    base = UpdateResult(name, version.origin, "current", _identity(version))
    base.results = [r.to_dict() for r in results]
    mine = [r for r in results if r.name == name]
    refused = [r for r in results if not r.ok]
    if not mine:
        base.state = "error"
        base.detail = (
            refused[0].error if refused and refused[0].error else f"{name} is no longer there"
        )
        return base
    result = mine[0]
    base.upstream = _identity(result)
    if base.upstream not in _stored_identities(store, name):
        base.state = "changed"
    else:
        back = _going_back(store, name, base.upstream)
        if back is not None:
            base.state, base.detail = back
    return base


def _adopted(version: Version) -> bool:
    info = version.source if isinstance(version.source, dict) else {}
    recorded = info.get("recorded")
    return isinstance(recorded, dict) and recorded.get("kind") == "npx-adopt"


def _as_npx_copies(scratch: Store, results: list[ImportResult]) -> list[ImportResult]:
    """The results with each digest as npx installs those bytes: npx leaves ``metadata.json``
    (and a few folders) out of the copy it writes (vercel-labs/skills#806), so an adopted
    version is that copy, and the source holding the left-out files is no change."""
    out = []
    for result in results:
        version = next(
            (v for v in scratch.versions(name=result.name) if v.digest == result.digest), None
        )
        if version is None or not result.ok:
            out.append(result)
            continue
        bundle = scratch.get_bundle(version)
        files = [(f.path, bundle.contents[f.path]) for f in bundle.files]
        kept = npx_copied(files)
        if len(kept) == len(files):
            out.append(result)
            continue
        executable = {f.path: f.executable for f in bundle.files}
        try:
            copy = bundle_from_files(
                {p: (d, executable[p]) for p, d in kept}, where=str(result.name)
            )
        except ChimeraError:
            out.append(result)
            continue
        out.append(replace(result, digest=copy.digest))
    return out


def _peek(
    store: Store, name: str, version: Version, scratch_path: Path, options: dict[str, Any]
) -> UpdateResult:
    """What the origin of ``name`` holds now, compared with the store (nothing written)."""
    try:
        source, extra = refetch_args(version)
    except NoUpstreamError as exc:
        return UpdateResult(name, version.origin, "no-source", _identity(version), detail=str(exc))
    with Store(scratch_path) as scratch:
        try:
            results = import_source(scratch, source, hooks=(), **extra, **options)
        except ChimeraError as exc:
            return UpdateResult(name, version.origin, "error", _identity(version), detail=str(exc))
        if _adopted(version):
            results = _as_npx_copies(scratch, results)
    return _compare(store, name, version, results)


def outdated(
    store: Store, names: Iterable[str] | None = None, *, timeout: float | None = None
) -> list[UpdateResult]:
    """Fetch every origin again and say which now hold bytes the store does not have.

    Nothing is written to ``store``: each origin is imported into a throwaway store. A skill
    ``adopt`` took is fetched from the source npx recorded, never from its installed folder.

    Args:
        store: an open Store.
        names: only these (default: all).
        timeout: seconds per fetch (default: the importer's).
    Returns:
        One UpdateResult per name; ``changed`` ones differ upstream; ``no-source`` ones have
        nothing but an installed copy to go by.
    """
    out = []
    options = _options(timeout)
    with tempfile.TemporaryDirectory(prefix="chimera-cards-outdated-") as tmp:
        for index, (name, version) in enumerate(origins(store, names)):
            out.append(_peek(store, name, version, Path(tmp) / f"peek-{index}.db", options))
    return out


def update(
    store: Store, names: Iterable[str] | None = None, *, timeout: float | None = None
) -> list[UpdateResult]:
    """Re-import every origin; new bytes become a new version, held as any import from there is.

    A skill ``adopt`` took is fetched from the source npx recorded (held for review as an import
    from there is), never re-read from its installed folder: an edit there is drift for
    ``check``, not an update. Its source's files npx leaves out of an install are no change.

    Args:
        store: an open Store.
        names: only these (default: all).
        timeout: seconds per fetch (default: the importer's).
    Returns:
        One UpdateResult per name: ``imported`` with the new version's status, ``downgrade`` or
        ``rejected`` when the origin went back (nothing changes then), ``no-source`` when the
        only known source is an installed copy, else ``current``.
    """
    out = []
    options = _options(timeout)
    with tempfile.TemporaryDirectory(prefix="chimera-cards-update-") as tmp:
        for index, (name, version) in enumerate(origins(store, names)):
            if _adopted(version) or _installed_copy(version):
                # Peek first: only what differs beyond npx's own copy is imported.
                peeked = _peek(store, name, version, Path(tmp) / f"peek-{index}.db", options)
                if peeked.state != "changed":
                    out.append(peeked)
                    continue
            out.append(_update_one(store, name, version, options))
    return out


def _installed_copy(version: Version) -> bool:
    try:
        refetch_args(version)
    except NoUpstreamError:
        return True
    return False


def _update_one(store: Store, name: str, version: Version, options: dict[str, Any]) -> UpdateResult:
    known = _stored_identities(store, name)
    try:
        source, extra = refetch_args(version)
        results = import_source(store, source, **extra, **options)
    except NoUpstreamError as exc:
        return UpdateResult(name, version.origin, "no-source", _identity(version), detail=str(exc))
    except ChimeraError as exc:
        return UpdateResult(name, version.origin, "error", _identity(version), detail=str(exc))
    res = UpdateResult(name, version.origin, "current", _identity(version))
    res.results = [r.to_dict() for r in results]
    mine = [r for r in results if r.name == name]
    if not mine:
        res.state = "error"
        refused = [r for r in results if not r.ok]
        res.detail = refused[0].error if refused and refused[0].error else f"{name} is gone"
        return res
    res.upstream = _identity(mine[0])
    res.status = mine[0].status
    back = _going_back(store, name, res.upstream)
    if back is not None:
        res.state, res.detail = back
    elif res.upstream not in known:
        res.state = "imported"
        if mine[0].status == "pending":
            res.detail = f"review it: chimera-cards review {name}"
    else:
        res.status = None
    return res
