"""What may be installed: the approval gate applied to stored skills."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from chimera_cards._bundles.manifest import BundleFile
from chimera_cards._install.receipt import InstallError
from chimera_cards._install.state import Candidate
from chimera_cards._trust.policy import (
    evaluate,
    evaluate_remembered,
    get_threshold,
    is_clean_path,
    trusted_keys,
)
from chimera_cards._util.records import record

TYPE_CHECKING = False  # typing is not imported at run time: check starts up on this module
if TYPE_CHECKING:
    from chimera_cards._bundles.bundle import Bundle

# -- against the store -------------------------------------------------------------------------


class NotApprovedError(InstallError):
    """The named skill has no version that may be used now (pending, rejected, retired, or its
    approvals no longer verify): it is not installed. ``kind`` says which, in one word: absent,
    pending, downgrade, rejected, retired, expired, unapproved."""

    def __init__(self, message: str, *, kind: str = "unapproved") -> None:
        super().__init__(message)
        self.kind = kind


@record(frozen=True)
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


def trust_file_policy(trust_file: Path | None) -> Policy:
    """The store's own trust (no file), or a trust file's keys and threshold in its place."""
    if trust_file is None:
        return Policy()
    from chimera_cards._review.trustfile import read_trust_file

    trust = read_trust_file(trust_file)
    return Policy(tuple(trust.trusted_keys()), trust.threshold)


@record(frozen=True)
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
    kind: str = "usable"  # else why not, in one word (see NotApprovedError)
    reason: str = ""  # the version's own reason (why it was retired, rejected, held)

    def candidate(self) -> Candidate:
        return Candidate(self.name, self.digest, self.status, self.usable, self.why, self.files)


def _judge(store, versions: list, policy: Policy) -> tuple[list[tuple[bool, str, str]], dict]:
    """The gate's rule for each version, without re-reading the store's copy of its files.

    Installing re-reads and re-hashes them (``load_bundle``); checking compares a folder's own
    bytes with the manifest, so what matters there is only whether the version is active and its
    statements, over exactly that digest, verify under ``policy`` now. ``verify`` covers the
    store's copy. Under the store's own trust list the verdicts come through the store's memo
    (``trust.evaluate_remembered``); a trust file's keys are always checked afresh, since the
    point of giving one is not to take the store's word.

    Returns:
        ((usable, why, kind) per version; new memo rows for ``Store.remember_verdicts``).
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
            answers.append((False, why, version.status))
        elif verdict.rejected:
            answers.append((False, f"rejected by {who}", "rejected"))
        elif verdict.approved or (
            not policy.from_file
            and is_clean_path(version.origin, version.final_url, version.provenance)
        ):
            answers.append((True, "", "usable"))
        else:
            why = f"{len(verdict.approvers)} of {threshold} required approvals by {keys} verify"
            if verdict.expired:
                ends = sorted(a["expires"] for a in verdict.approvals)
                why += f"; the approval expired {ends[-1]}"
            answers.append((False, why, "expired" if verdict.expired else "unapproved"))
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
        StoredSkill(
            v.name,
            v.id,
            v.sha256,
            v.digest,
            v.status,
            usable,
            why,
            tuple(files[v.digest]),
            kind,
            v.reason or "",
        )
        for v, (usable, why, kind) in zip(versions, answers, strict=True)
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


def installable(
    skills: Iterable[StoredSkill], name: str, digest: str | None = None, *, store=None
) -> StoredSkill:
    """The version of ``name`` to install: the usable one (or the one with ``digest``).

    Args:
        skills: ``stored_skills`` of (at least) this name.
        name: the skill's name.
        digest: the bundle a lockfile pins (a bundle digest, or an older lockfile's SKILL.md
            hash).
        store: the open store, to tell a pending version held as a downgrade from one
            awaiting its first review (only needed for that message).
    Raises:
        NotApprovedError: no usable version; its message says truly why, and what would help.
    """
    mine = [s for s in skills if s.name == name]
    if not mine:
        raise NotApprovedError(
            f"no skill named {name!r} in the store; import it first "
            "(with a lockfile: chimera-cards import SOURCE --lockfile LOCKFILE)",
            kind="absent",
        )
    if digest is not None:
        # A lockfile pins the bundle digest; older lockfiles pinned SKILL.md's SHA-256.
        pinned = [s for s in mine if digest in (s.digest, s.sha256)]
        if not pinned:
            raise NotApprovedError(
                f"{name}: no stored version has bundle digest {digest[:12]} (the store holds "
                f"{len(mine)} other version(s) of it); import the locked one "
                "(chimera-cards import SOURCE --lockfile LOCKFILE)",
                kind="absent",
            )
        mine = pinned
    usable = [s for s in mine if s.usable]
    if usable:
        return usable[-1]
    kind, message = _why_not(mine[-1], [s for s in skills if s.name == name], store)
    raise NotApprovedError(message, kind=kind)


def _why_not(skill: StoredSkill, versions: list[StoredSkill], store) -> tuple[str, str]:
    """(kind, message) for a version that may not be installed, each true for its kind."""
    label = f"{skill.name} {skill.digest[:12]}"
    active = [s for s in versions if s.status == "active" and s.version_id != skill.version_id]
    other = f"the active version is {active[-1].digest[:12]}" if active else ""
    why = f" ({skill.reason})" if skill.reason else ""
    if skill.kind == "rejected":
        return "rejected", (
            f"{label} was rejected by a trusted reviewer{why}, not approved for use; it can "
            "never be installed: "
            + (f"use another version ({other})" if other else "use another version")
        )
    if skill.kind == "retired":
        return "retired", (
            f"{label} was retired{why}, not approved for use; "
            + (f"{other}: pin or install that" if other else "the name has no active version")
        )
    if skill.kind == "expired":
        return "expired", (
            f"{label} is not approved for use: {skill.why}; it is not used until a reviewer "
            "approves it again "
            f"(chimera-cards approve {skill.name} --digest {skill.sha256})"
        )
    if skill.kind == "unapproved":
        return "unapproved", (
            f"{label} is active but not approved for use: only {skill.why} (a key was "
            "removed or the threshold raised); it needs approvals by trusted reviewers again"
        )
    if store is not None:
        place = _downgrade(store, skill)
        if place:
            return "downgrade", (
                f"{label} is held as a downgrade, not approved for use ({place}); "
                + (f"{other}: pin that" if other else "pin the newer version")
                + ", or approve it with --allow-downgrade to move the name back"
            )
    return "pending", (
        f"{label} is pending review, not approved for use{why}; review it "
        f"(chimera-cards review {skill.name} --digest {skill.sha256}) and approve it"
    )


def _downgrade(store, skill: StoredSkill) -> str:
    """Why a pending version is held as a downgrade, or "" (the signed history decides)."""
    from chimera_cards._review.supersession import standing  # only for this message

    with store.snapshot():
        version = store.version(skill.name, skill.sha256)
        if version is None:
            return ""
        place = standing(store, version, trusted_keys(store), get_threshold(store))
    return place.reason()
