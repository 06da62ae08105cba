"""The approval gate: a version reaches a model only if its approvals verify now."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from chimera_cards._bundles.folderscan import SKILL_FILE
from chimera_cards._bundles.manifest import BundleFile
from chimera_cards._store.facade import Store
from chimera_cards._store.rows import Version
from chimera_cards._trust.policy import (
    TrustedKey,
    Verdict,
    evaluate,
    get_threshold,
    is_clean_path,
    trusted_keys,
    verdict_key,
)
from chimera_cards.errors import ChimeraError

# Functions that may hand card text to a model: the gate and its renderer.
MODEL_READ_PATHS = frozenset(
    {
        "chimera_cards._retrieve.matching.match",
        "chimera_cards._retrieve.matching._match",
        "chimera_cards._retrieve.render.render_for_prompt",
    }
)
# Functions that read card bytes for a human or a file, never for a model (review screen, export,
# integrity checks, indexing). Listed so the read-path test notices any new reader.
OTHER_READ_PATHS = frozenset(
    {
        "chimera_cards._retrieve.gate.gate_check",  # re-hash for the gate
        # what the reviewer is shown before approving
        "chimera_cards._retrieve.render.prompt_preview",
        "chimera_cards._review.decisions._decide",  # re-hash before signing approval or rejection
        "chimera_cards._review.view._review_view",  # the review screen, for a human
        # verify: signatures against the stored bytes
        "chimera_cards._review.statements.verify_check",
        # raw bytes for export/show; callers are listed too
        "chimera_cards._store.blobs.BlobsMixin.get_blob",
        # for sync_index: name/description/triggers
        "chimera_cards._store.search.SearchMixin.index_queue",
        "chimera_cards._store.verify.check_blobs",  # verify: re-hash every blob
        # writes the exact bytes to a file for a person/git
        "chimera_cards._retrieve.export.export_card",
        # every file of a bundle, re-hashed; callers listed
        "chimera_cards._store.blobs.BlobsMixin.get_bundle",
        "chimera_cards._store.blobs.BlobsMixin.get_bundles",  # get_bundle of many; callers listed
        # update: the digest of npx's copy of what a source serves (a hash, never shown)
        "chimera_cards._importer.update._as_npx_copies",
        # the files' bytes for get_bundle(s) to check
        "chimera_cards._store.blobs.BlobsMixin._blobs_of",
        # SKILL.md alone, re-hashed; callers listed
        "chimera_cards._store.blobs.BlobsMixin.skill_bytes",
        # records a bare card blob as its one-file bundle
        "chimera_cards._store.blobs.BlobsMixin._bundle_of",
        # for installers: only after the gate passed
        "chimera_cards._retrieve.export.approved_bundle",
        "chimera_cards._store.verify.check_bundles",  # verify: manifests against their file rows
        # files install writes, after the gate rule said yes
        "chimera_cards._install.policy.load_bundle",
        "chimera_cards._install.policy.load_bundles",  # the same for many names at once
        # npx's computedHash of stored files, for skills-lock.json pins and lock --format npx
        "chimera_cards._importer.npxlock.npx_pins",
        "chimera_cards._importer.npxlock.npx_lock_entries",
        # check: the approved SKILL.md beside npx's rewrite of it for Eve (compared, never shown)
        "chimera_cards._install.verify._name_eve_rewrites",
    }
)


@dataclass
class GateDecision:
    """Whether a stored version may reach an agent, and its verified bytes if so."""

    ok: bool
    basis: str = ""  # "clean-path" | "approved" when ok
    reason: str = ""  # why not, when not ok
    approvers: list[str] = field(default_factory=list)
    data: bytes = b""  # the verified SKILL.md bytes (only when ok)
    files: tuple[BundleFile, ...] = ()  # the bundle's other files, verified (only when ok)


def gate_version(
    store: Store, version: Version, *, memo: dict[bytes, bool] | None = None
) -> GateDecision:
    """``gate_check`` with the trust list and threshold read from the store now.

    Args:
        store: the open store (inside a snapshot for one consistent answer).
        version: the version to check.
    Returns:
        The decision.
    """
    return gate_check(
        store, version, trusted=trusted_keys(store), threshold=get_threshold(store), memo=memo
    )


def _note(problems: list[str] | None, text: str) -> None:
    if problems is not None:
        problems.append(text)


def _label(name: object) -> str:
    # For messages about broken rows: never let the label itself be unprintable.
    return ascii(name) if not isinstance(name, str) else name.encode("utf-8", "replace").decode()


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).encode("utf-8", "backslashreplace").decode().split())
    return f"{type(exc).__name__}: {text}"[:200]


def gate_check(
    store: Store,
    version: Version | None = None,
    *,
    trusted,
    threshold: int,
    verify: bool = True,
    memo: dict[bytes, bool] | None = None,
    verdicts: dict[bytes, Verdict] | None = None,
    name: str | None = None,
    sha256: str | None = None,
    **_columns,
) -> GateDecision:
    """May this version go to a model right now? Re-hashes every file of its bundle and
    re-verifies its statements; never trusts columns alone.

    Args:
        store: the open store.
        version: the version; or give ``name`` and ``sha256`` and it is read from the store
            (other column keywords are accepted and ignored: the row is re-read).
        trusted: the trust list; threshold: approvals needed.
    Returns:
        The decision, with the verified SKILL.md bytes and the other files when it is ok.
    """
    if version is None:
        version = store.version(name or "", sha256 or "")
        if version is None:
            return GateDecision(False, reason="no such version")
    name, sha256, status = version.name, version.sha256, version.status
    origin, final_url, provenance = version.origin, version.final_url, version.provenance
    if status != "active":
        return GateDecision(False, reason=f"status is {status}")
    if not verify:  # benchmark baseline only: what the gate costs
        data = store.get_blob(version.skill_sha256)
        if data is None:
            return GateDecision(False, reason="blob is missing")
        return GateDecision(True, basis="unverified", data=data)
    try:
        bundle = store.get_bundle(version)  # every file re-hashed
    except ChimeraError:
        return GateDecision(False, reason="stored bytes do not match their SHA-256")
    data = bundle.skill_md
    others = tuple(f for f in bundle.files if f.path != SKILL_FILE)
    envelopes = store.envelopes(sha256)
    verdict = _evaluate(envelopes, trusted, name, sha256, threshold, memo, verdicts)
    if verdict.rejected:
        return GateDecision(False, reason="rejected by a trusted reviewer")
    if is_clean_path(origin, final_url, provenance):
        return GateDecision(
            True, basis="clean-path", approvers=verdict.approvers, data=data, files=others
        )
    if verdict.approved:
        return GateDecision(
            True, basis="approved", approvers=verdict.approvers, data=data, files=others
        )
    return GateDecision(False, reason=not_approved_reason(verdict))


def not_approved_reason(verdict: Verdict) -> str:
    """Why a verdict does not approve, in words: how many approvals count, and which expired."""
    text = f"{len(verdict.approvers)} of {verdict.threshold} required trusted approvals verify"
    if verdict.expired:
        ends = sorted(a["expires"] for a in verdict.approvals if a["keyid"] in verdict.expired)
        text += f" (the approval by {', '.join(verdict.expired)} expired {ends[-1]})"
    return text


def _verdict_key(
    envelopes: list[str], trusted: list[TrustedKey], name: str, sha256: str, threshold: int
) -> bytes:
    return verdict_key(envelopes, trusted, name=name, sha256=sha256, threshold=threshold)


def _evaluate(
    envelopes: list[str],
    trusted,
    name: str,
    sha256: str,
    threshold: int,
    memo: dict[bytes, bool] | None,
    verdicts: dict[bytes, Verdict] | None,
) -> Verdict:
    """``trust.evaluate``, remembered in ``verdicts`` by its exact inputs (see ``RenderCache``)."""
    trusted = list(trusted)
    if verdicts is None:
        return evaluate(
            envelopes, trusted, name=name, sha256=sha256, threshold=threshold, memo=memo
        )
    key = _verdict_key(envelopes, trusted, name, sha256, threshold)
    verdict = verdicts.get(key)
    if verdict is None:
        verdict = evaluate(
            envelopes, trusted, name=name, sha256=sha256, threshold=threshold, memo=memo
        )
        verdicts[key] = verdict
    # As it stands now (an approval may have expired since it was remembered), and a copy:
    # callers own the lists they are handed, and must never edit the remembered verdict.
    return verdict.at(datetime.now(UTC))
