"""What may be installed: the approval gate applied to stored skills."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chimera_cards.bundles.bundle import (
    Bundle,
    BundleFile,
)
from chimera_cards.install.receipt import InstallError
from chimera_cards.install.state import Candidate
from chimera_cards.trust.policy import (
    evaluate,
    evaluate_remembered,
    get_threshold,
    is_clean_path,
    trusted_keys,
)

__all__ = [
    "NotApprovedError",
    "Policy",
    "StoredSkill",
    "installable",
    "load_bundle",
    "load_bundles",
    "stored_skills",
]


# -- against the store -------------------------------------------------------------------------


class NotApprovedError(InstallError):
    """The named skill has no version that may be used now (pending, rejected, retired, or its
    approvals no longer verify): it is not installed."""


@dataclass(frozen=True)
class Policy:
    """Whose approvals count when deciding what may be installed and what ``check`` calls ok.

    ``None`` fields mean the store's own trust list and threshold. A trust file given to
    ``check`` replaces both, and then only signed approvals count (a clean local import is not
    an approval anyone in the file made).
    """

    trusted: tuple | None = None  # tuple[TrustedKey, ...]
    threshold: int | None = None

    @property
    def from_file(self) -> bool:
        return self.trusted is not None


@dataclass(frozen=True)
class StoredSkill:
    """A stored version seen as a bundle, and whether it may be used now."""

    name: str
    version_id: int
    sha256: str
    digest: str
    status: str
    usable: bool
    why: str
    files: tuple[BundleFile, ...]

    def candidate(self) -> Candidate:
        return Candidate(self.name, self.digest, self.status, self.usable, self.why, self.files)


def _judge(store, versions: list, policy: Policy) -> tuple[list[tuple[bool, str]], dict]:
    """The gate's rule for each version, without re-reading the store's copy of its files.

    Installing re-reads and re-hashes them (``load_bundle``); checking compares a folder's own
    bytes with the manifest, so what matters there is only whether the version is active and its
    statements, over exactly that digest, verify under ``policy`` now. ``verify`` covers the
    store's copy. Under the store's own trust list the verdicts come through the store's memo
    (``trust.evaluate_remembered``); a trust file's keys are always checked afresh, since the
    point of giving one is not to take the store's word.

    Returns:
        ((usable, why) per version; new memo rows for ``Store.remember_verdicts``).
    """
    trusted = list(policy.trusted) if policy.trusted is not None else trusted_keys(store)
    threshold = policy.threshold if policy.threshold is not None else get_threshold(store)
    active = [v for v in versions if v.status == "active"]
    signed = store.envelopes_of(v.sha256 for v in active)
    items = [(v.name, v.sha256, signed.get(v.sha256, [])) for v in active]
    fresh: dict[str, str] = {}
    if policy.from_file:
        verdicts = [
            evaluate(envs, trusted, name=name, sha256=sha, threshold=threshold)
            for name, sha, envs in items
        ]
    else:
        verdicts, fresh = evaluate_remembered(store, items, trusted, threshold)
    by_id = {v.id: verdict for v, verdict in zip(active, verdicts, strict=True)}
    who = "a reviewer in the trust file" if policy.from_file else "a trusted reviewer"
    keys = "keys in the trust file" if policy.from_file else "trusted reviewers"
    answers = []
    for version in versions:
        verdict = by_id.get(version.id)
        if verdict is None:
            why = f"{version.status}: {version.reason}" if version.reason else version.status
            answers.append((False, why))
        elif verdict.rejected:
            answers.append((False, f"rejected by {who}"))
        elif verdict.approved or (
            not policy.from_file
            and is_clean_path(version.origin, version.final_url, version.provenance)
        ):
            answers.append((True, ""))
        else:
            answers.append(
                (
                    False,
                    f"{len(verdict.approvers)} of {threshold} required approvals by {keys} verify",
                )
            )
    return answers, fresh


def stored_skills(
    store,
    policy: Policy = Policy(),
    names: Iterable[str] | None = None,
    digests: Iterable[str] = (),
    *,
    manifests: bool = True,
) -> list[StoredSkill]:
    """Stored versions as bundle manifests, with the gate's answer under ``policy``.

    Args:
        store: an open Store.
        policy: whose approvals count (default: the store's trust list and threshold).
        names: the versions of these names (default: every version).
        digests: and the versions with these bundle digests, whatever their name.
        manifests: read each version's file list (False: ``files`` is empty, for a caller
            that reads only the few it needs).
    Returns:
        One StoredSkill per version whose bundle is stored, oldest first.
    """
    with store.snapshot():
        if names is None:
            chosen = {v.id: v for v in store.versions(order="id")}
            for v in store.versions_matching((), digests, details=False):
                chosen.setdefault(v.id, v)
            versions = [chosen[k] for k in sorted(chosen)]
        else:
            versions = store.versions_matching(names, digests, details=False)
        wanted = (v.digest for v in versions)
        files = (
            store.bundle_files_of(wanted)
            if manifests
            else dict.fromkeys(store.stored_bundles(wanted), ())
        )
        versions = [v for v in versions if v.digest in files]
        answers, fresh = _judge(store, versions, policy)
    # Remembered after the read snapshot, in a write of its own that never waits.
    store.remember_verdicts(fresh)
    return [
        StoredSkill(v.name, v.id, v.sha256, v.digest, v.status, usable, why, tuple(files[v.digest]))
        for v, (usable, why) in zip(versions, answers, strict=True)
    ]


def load_bundle(store, skill: StoredSkill) -> Bundle:
    """The exact files of a stored version, every one re-hashed against the manifest.

    Raises:
        TamperedBlobError: the store's copy no longer matches (run ``verify``).
    """
    bundle = store.get_bundle(skill.version_id)
    if bundle.digest != skill.digest:
        raise InstallError(f"{skill.name}: stored bundle does not match its digest")
    return bundle


def load_bundles(store, skills: Sequence[StoredSkill]) -> list[Bundle]:
    """``load_bundle`` of each skill, the store read in a few queries for any number.

    Raises:
        TamperedBlobError: a store's copy no longer matches (run ``verify``).
    """
    versions = {
        v.id: v for v in store.versions_matching({s.name for s in skills}, (), details=False)
    }
    if any(s.version_id not in versions for s in skills):  # removed meanwhile: one by one
        return [load_bundle(store, s) for s in skills]
    bundles = store.get_bundles([versions[s.version_id] for s in skills])
    for skill, bundle in zip(skills, bundles, strict=True):
        if bundle.digest != skill.digest:
            raise InstallError(f"{skill.name}: stored bundle does not match its digest")
    return bundles


def installable(skills: Iterable[StoredSkill], name: str, digest: str | None = None) -> StoredSkill:
    """The version of ``name`` to install: the usable one (or the one with ``digest``).

    Raises:
        NotApprovedError: no usable version; the message names the newest one and why.
    """
    mine = [s for s in skills if s.name == name]
    if not mine:
        raise NotApprovedError(f"no skill named {name!r} in the store")
    if digest is not None:
        # A lockfile pins the bundle digest; older lockfiles pinned SKILL.md's SHA-256.
        pinned = [s for s in mine if digest in (s.digest, s.sha256)]
        if not pinned:
            raise NotApprovedError(f"{name}: no stored version has bundle digest {digest[:12]}")
        mine = pinned
    usable = [s for s in mine if s.usable]
    if usable:
        return usable[-1]
    newest = mine[-1]
    raise NotApprovedError(
        f"{name} {newest.digest[:12]} is {newest.status}, not approved for use"
        + (f" ({newest.why})" if newest.why and newest.why != f"status is {newest.status}" else "")
        + "; review and approve it first"
    )
