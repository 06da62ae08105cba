"""Review decisions: approve, reject, retire, and the trust list and threshold they answer to."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from chimera_cards._review.refs import resolve_version
from chimera_cards._review.supersession import (
    DowngradeError,
    name_verdicts,
    next_sequence,
    raise_floor,
    standing,
    version_rank,
)
from chimera_cards._scan.codescan import finding_id
from chimera_cards._scan.findings import SHAPE_RULES
from chimera_cards._store.facade import Store
from chimera_cards._store.rows import SUPERSEDED, Version
from chimera_cards._store.statements import EXPIRES_SETTING, THRESHOLD_SETTING
from chimera_cards._trust.freshness import expiry_after, parse_duration, rank_of
from chimera_cards._trust.keys import (
    check_key_name,
    parse_public_key,
    public_of,
)
from chimera_cards._trust.policy import (
    TrustedKey,
    Verdict,
    check_statement,
    evaluate,
    evaluate_remembered,
    get_threshold,
    is_clean_path,
    make_statement,
    peek_statement,
    sign_statement,
    trusted_keys,
)
from chimera_cards._util.integrity import digest_keys
from chimera_cards.errors import (
    LintBlockedError,
    RejectedError,
    StatementError,
    StatusChangeError,
    TamperedBlobError,
    TrustConflictError,
    UnknownCardError,
    UnknownVersionError,
    UntrustedKeyError,
    UsageError,
)


def verdict_for(store: Store, name: str, sha256: str) -> Verdict:
    """What the trusted statements stored about (name, sha256) say under the current policy."""
    return evaluate(
        store.envelopes(sha256),
        trusted_keys(store),
        name=name,
        sha256=sha256,
        threshold=get_threshold(store),
    )


def _lint_errors(findings: list, accepted: Iterable[str] = ()) -> list[str]:
    """Ids of the error findings that no trusted approval accepted (empty: nothing blocks).
    A card's shape (``SHAPE_RULES``) blocks neither an import nor an approval."""
    ok = set(accepted)
    return [
        finding_id(f)
        for f in findings
        if isinstance(f, dict)
        and f.get("severity") == "error"
        and f.get("rule") not in SHAPE_RULES
        and finding_id(f) not in ok
    ]


def accepted_findings(store: Store, name: str, sha256: str) -> list[str]:
    """Finding ids accepted inside the trusted, verifying approvals of (name, sha256)."""
    return verdict_for(store, name, sha256).accepted


def store_statement(store: Store, envelope: dict | str) -> bool:
    """Keep an envelope (indexed by what it claims; trust is decided on every read). New?

    One row per (sha256, claimed reviewer, decision). A row whose signature does not verify
    under the current trust list gives way to one that does, so a forged statement planted in
    an approvals file cannot occupy the slot of the reviewer's real one.
    """
    text = envelope if isinstance(envelope, str) else json.dumps(envelope, sort_keys=True)
    st = peek_statement(text)
    if st is None:
        raise StatementError("not a chimera review statement")
    sha = st.sha256.lower()
    slot = store.statement_slot(sha, st.reviewer, st.decision)
    if slot is None:
        _put(store, st, sha, text, None)
        return True
    if slot[1] == text:
        return False
    trusted = trusted_keys(store)
    new_ok, _ = check_statement(text, trusted, name=st.name, sha256=sha)
    old_ok, _ = check_statement(slot[1], trusted, name=st.name, sha256=sha)
    # A reviewer's newer decision on the same bytes (a fresh approval, one that moves the name
    # back, or renews an expiry) takes the place of the older one; a replayed older one never
    # takes the place of a newer.
    newer = (
        old_ok is not None
        and new_ok is not None
        and rank_of(new_ok.sequence, new_ok.time) > rank_of(old_ok.sequence, old_ok.time)
        # ... and says something the older one did not: the same approval again is one.
        and (
            new_ok.downgrade != old_ok.downgrade
            or new_ok.expires != old_ok.expires
            or (old_ok.sequence == 0 and new_ok.sequence > 0)
        )
    )
    if new_ok is not None and (old_ok is None or newer):
        _put(store, st, sha, text, slot[0])
        return True
    return False


def _put(store: Store, st, sha: str, text: str, replace_id: int | None) -> None:
    store.put_statement(
        name=st.name,
        sha256=sha,
        decision=st.decision,
        keyid=st.reviewer,
        signed_at=st.time,
        envelope=text,
        replace_id=replace_id,
    )


@dataclass
class Change:
    """A version whose status a trust or statement change moved, and why."""

    name: str
    sha256: str
    old: str
    new: str
    reason: str

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "digest": self.sha256,
            "from": self.old,
            "to": self.new,
            "reason": self.reason,
        }


def _set_status(
    store: Store,
    conn: sqlite3.Connection,
    name: str,
    sha: str,
    old: str,
    new: str,
    reason: str,
    changes: list[Change],
    detail: dict | None = None,
) -> None:
    # Through the store, so the audit log records it and `verify` can replay it; activating
    # retires the name's current active version ("superseded"), which is recorded here too.
    if new == "active":
        current = store.active(name)
        if current is not None and current.sha256 != sha:
            changes.append(
                Change(name, current.sha256, "active", SUPERSEDED, f"superseded by {sha[:12]}")
            )
    store.set_status(conn, name, sha, new, reason, detail)
    changes.append(Change(name, sha, old, new, reason))


def _activation_order(item: tuple[Version, Verdict], threshold: int) -> tuple:
    # The newest signed version of a name is placed first; the others are then measured
    # against it (and held as downgrades), whatever order they were imported in.
    version, verdict = item
    rank = version_rank(verdict, threshold)
    return (0, -rank[0], -rank[1], version.id) if rank else (1, 0, 0, version.id)


def reconcile(
    store: Store,
    conn: sqlite3.Connection,
    names: list[str] | None = None,
    *,
    approved_now: str | None = None,
) -> list[Change]:
    """Bring statuses in line with the statements, trust list and threshold (inside a transaction).

    pending + approved (and no lint errors) -> active, superseding the active one — unless the
    name's signed history says the version is older (``supersession.standing``): then it is held
    pending as a downgrade, whatever channel brought it, until approvals that say so move the
    name back. Without signed ranks to compare (an active clean import), a version imported
    before the active one is only activated when a reviewer approves it right now
    (``approved_now``). pending/active + a trusted rejection -> rejected; active by approval but
    no longer approved (a key removed, the threshold raised, the approvals expired) -> pending.
    Clean path imports need no approval.
    """
    if names is None:
        # Every version: one that cannot be read is left as it is rather than blocking the rest.
        candidates, _ = store.versions_tolerant(statuses=("pending", "active"))
    else:
        candidates = store.versions(statuses=("pending", "active"), names=names, order="id")
    trusted = trusted_keys(store)
    threshold = get_threshold(store)
    changes: list[Change] = []
    judged: list[tuple[Version, Verdict]] = []
    for version in candidates:
        # Through the store's memo, kept in this same transaction: check and install then find
        # the verdict without verifying the signatures again.
        (verdict,), fresh = evaluate_remembered(
            store,
            [(version.name, version.sha256, store.envelopes(version.sha256))],
            trusted,
            threshold,
        )
        store.remember_verdicts(fresh)
        judged.append((version, verdict))
    judged.sort(key=lambda item: _activation_order(item, threshold))
    for version, verdict in judged:
        vid, name, sha = version.id, version.name, version.sha256
        # Re-read: an earlier version in this loop may have superseded this one.
        status = store.status_of(vid)
        if status not in ("pending", "active"):
            continue
        if verdict.rejected:
            _set_status(
                store,
                conn,
                name,
                sha,
                status,
                "rejected",
                "rejected by a trusted reviewer",
                changes,
            )
            continue
        clean = is_clean_path(version.origin, version.final_url, version.provenance)
        if (
            status == "pending"
            and verdict.approved
            and not _lint_errors(version.findings + store.scanner_findings(vid), verdict.accepted)
        ):
            place = standing(store, version, trusted, threshold)
            if place.older:
                continue  # held: a downgrade takes approvals that say so
            current = store.active(name)
            signed_newer = place.rank is not None and place.floor is not None
            if (
                current is not None
                and current.id > vid
                and sha != approved_now
                and not signed_newer
            ):
                continue  # an older version must not silently replace a newer active one
            n = len(verdict.approvers)
            _set_status(
                store,
                conn,
                name,
                sha,
                "pending",
                "active",
                f"approved by {n} of {threshold} required trusted reviewer(s)",
                changes,
                {
                    "approvers": verdict.approvers,
                    **({"rank": list(place.rank)} if place.rank else {}),
                },
            )
            raise_floor(store, conn, name, sha, place.rank)
        elif status == "active" and not clean and not verdict.approved:
            _set_status(
                store,
                conn,
                name,
                sha,
                "active",
                "pending",
                "approvals no longer meet the trust policy "
                f"({len(verdict.approvers)} of {threshold}"
                + (", expired" if verdict.expired else "")
                + ")",
                changes,
            )
    return changes


# --- trust list changes (each re-applies the policy to every pending/active version) ----------


def add_trust(store: Store, name: str, public) -> tuple[TrustedKey, list[Change]]:
    """Trust a reviewer's key; statements by it that were imported earlier now count.

    Returns:
        The trusted key and the status changes re-applying the policy caused.
    """
    check_key_name(name)
    with store.transaction() as conn:
        for other, keyid, text in store.trust_rows():
            if keyid == public.keyid and other != name:
                raise TrustConflictError(f"key {public.keyid} is already trusted as {other!r}")
            if other == name and parse_public_key(text) != public:
                raise TrustConflictError(
                    f"a different key is already trusted as {name!r}; remove it first"
                )
        store.add_trust_row(name, public.keyid, public.text())
        key = TrustedKey(name, public)
        store.append_audit(
            conn,
            "trust-add",
            None,
            None,
            {"name": name, "keyid": key.keyid, "public_key": public.text()},
        )
        return key, reconcile(store, conn)


def remove_trust(store: Store, name: str) -> tuple[TrustedKey, list[Change]]:
    """Stop trusting a key: versions that were active only on its approvals go back to pending.

    Returns:
        The key no longer trusted and the status changes re-applying the policy caused.
    """
    with store.transaction() as conn:
        texts = {other: text for other, _, text in store.trust_rows()}
        if name not in texts:
            raise UntrustedKeyError(f"no trusted key named {name!r}")
        store.remove_trust_row(name)
        key = TrustedKey(name, parse_public_key(texts[name]))
        store.append_audit(conn, "trust-remove", None, None, {"name": name, "keyid": key.keyid})
        return key, reconcile(store, conn)


def set_threshold(store: Store, k: int) -> list[Change]:
    """Require ``k`` distinct trusted approvals from now on, and re-apply the policy.

    Returns:
        The status changes it caused.
    """
    if k < 1:
        raise UsageError("threshold must be at least 1")
    with store.transaction() as conn:
        store.set_setting(THRESHOLD_SETTING, str(k))
        store.append_audit(conn, "trust-threshold", None, None, {"threshold": k})
        return reconcile(store, conn)


def set_default_expiry(store: Store, duration: str | None) -> None:
    """How long a new approval holds unless its reviewer says otherwise (``90d``); None: no
    default. Recorded in the audit log, so ``verify`` can tell a setting edited by hand.

    Raises:
        UsageError: not a duration.
    """
    if duration is not None:
        parse_duration(duration)
    with store.transaction() as conn:
        if duration is None:
            store.set_setting(EXPIRES_SETTING, "")
        else:
            store.set_setting(EXPIRES_SETTING, duration)
        store.append_audit(conn, "trust-expires", None, None, {"expires": duration or ""})


def default_expiry(store: Store) -> str | None:
    """The store's default lifetime of a new approval (``90d``), or None."""
    return store.get_setting(EXPIRES_SETTING) or None


def trust_status(store: Store) -> tuple[list[TrustedKey], int]:
    """The trust list and the threshold, read in one snapshot."""
    with store.snapshot():
        return trusted_keys(store), get_threshold(store)


# --- approve / reject / retire -----------------------------------------------------------------


@dataclass
class Decision:
    """A reviewer's approve/reject/retire, with the version's status after it."""

    name: str
    sha256: str
    decision: str
    reviewer: str
    status: str  # the version's status after the decision
    verdict: dict
    changes: list[Change] = field(default_factory=list)
    recorded: bool = True  # False when the same reviewer had already said the same thing
    reviewer_name: str = ""  # the signing key's name in this store's trust list

    def to_dict(self) -> dict:
        # Change renames old/new to from/to in JSON, so changes use its own to_dict.
        return digest_keys({**asdict(self), "changes": [c.to_dict() for c in self.changes]})


def _decide(
    store: Store,
    name: str,
    sha256: str,
    private,
    decision: str,
    note: str,
    accept: Iterable[str] = (),
    *,
    allow_downgrade: bool = False,
    expires: str | None = None,
) -> Decision:
    keyid = public_of(private).keyid
    history: dict = {}
    with store.transaction() as conn:
        # A digest, a unique 12+ digit prefix, or a one-file bundle's SKILL.md SHA-256; the
        # statement below always binds the version's own digest.
        sha = resolve_version(store, name, sha256, verb=decision).sha256
        version = store.version(name, sha)
        if version is None:
            raise UnknownVersionError(
                f"no version of {name!r} has sha256 {sha[:16]}…; you must give the hash of the "
                f"bytes you reviewed (see `chimera-cards review {name}`)"
            )
        status = version.status
        key_names = {k.keyid: k.name for k in trusted_keys(store)}
        if keyid not in key_names:
            raise UntrustedKeyError(
                f"key {keyid} is not in this store's trust list (chimera-cards trust add)"
            )
        try:
            store.get_bundle(version)  # every file re-hashed: sign only what is really there
        except TamperedBlobError:
            raise TamperedBlobError(
                f"the stored bytes of {name!r} no longer hash to {sha[:16]}…; refusing to sign"
            ) from None
        if decision == "approve":
            if status == "rejected":
                raise RejectedError(
                    f"{name} {sha[:12]} was rejected; a rejected version stays rejected"
                )
            # Other scanners' findings hold a version as ours do, and are accepted the same way.
            findings = version.findings + store.scanner_findings(version.id)
            known = {finding_id(f) for f in findings if isinstance(f, dict)}
            unknown = sorted(set(accept) - known)
            if unknown:
                raise UsageError(
                    f"--accept {unknown[0]}: no such finding on {name} {sha[:12]} "
                    "(ids are listed by `chimera-cards review`)"
                )
            blocking = _lint_errors(findings, accept)
            if blocking:
                listed = ", ".join(blocking[:5]) + (" …" if len(blocking) > 5 else "")
                raise LintBlockedError(
                    f"{name} {sha[:12]} has lint errors ({listed}); fix the skill and import it "
                    "again, or accept each by id with --accept if it is a true positive you read"
                )
            history = _approval_history(store, version, allow_downgrade, expires)
        elif accept:
            raise UsageError("--accept goes with approve, not reject")
        st = make_statement(name, sha, decision, keyid, note, tuple(accept), **history)
        recorded = store_statement(store, sign_statement(private, st))
        store.append_audit(
            conn,
            decision,
            name,
            sha,
            {
                "reviewer": keyid,
                "note": note,
                **({"accepted": sorted(accept)} if accept else {}),
                **{k: v for k, v in history.items() if v},
            },
        )
        changes: list[Change] = []
        if history.get("downgrade") and status == SUPERSEDED:
            # Moving back to a version that was in use: it is a candidate again, and the
            # policy below activates it once enough approvals say so.
            _set_status(
                store, conn, name, sha, status, "pending", "approved to move the name back", changes
            )
        if decision == "reject" and status != "rejected":
            # A verdict on the bytes whatever their status (retired history included); the
            # reviewer's reason is what `show` and `review` display.
            _set_status(
                store, conn, name, sha, status, "rejected", note, changes, {"reviewer": keyid}
            )
        changes += reconcile(
            store, conn, [name], approved_now=sha if decision == "approve" else None
        )
        status_now = store.status_of(version.id) or status
        verdict = verdict_for(store, name, sha)
        if status_now == "active":  # a renewed approval of the active version raises the floor
            raise_floor(store, conn, name, sha, version_rank(verdict, verdict.threshold))
    return Decision(
        name,
        sha,
        decision,
        keyid,
        status_now,
        verdict.to_dict(),
        changes,
        recorded,
        key_names[keyid],
    )


def _approval_history(
    store: Store, version: Version, allow_downgrade: bool, expires: str | None
) -> dict:
    """The signed fields that place a new approval in its name's history: the next sequence,
    the digest it supersedes, whether it moves the name back, and when it expires.

    Raises:
        DowngradeError: the version is older than what the name has been, and the reviewer did
            not say ``allow_downgrade``.
    """
    trusted, threshold = trusted_keys(store), get_threshold(store)
    verdicts = name_verdicts(store, version.name, trusted, threshold)
    place = standing(store, version, trusted, threshold, verdicts=verdicts)
    if place.older and not allow_downgrade:
        raise DowngradeError(
            f"{place.reason()}; nothing was signed"
            if place.reason()
            else f"{version.name} {version.sha256[:12]} is older than its active version"
        )
    current = store.active(version.name)
    if current is not None and current.sha256 != version.sha256:
        supersedes = current.sha256
    else:
        supersedes = place.floor_sha256 or ""
    if expires is None:
        duration = default_expiry(store)
        expires = expiry_after(parse_duration(duration)) if duration else ""
    return {
        "sequence": next_sequence(store, version.name, verdicts),
        "supersedes": supersedes if supersedes != version.sha256 else "",
        "downgrade": place.older,
        "expires": expires,
    }


def approve(
    store: Store,
    name: str,
    sha256: str,
    private,
    note: str = "",
    *,
    accept: Iterable[str] = (),
    allow_downgrade: bool = False,
    expires: str | None = None,
) -> Decision:
    """Sign and store an approval of exactly these bytes, then re-apply the trust policy.

    Args:
        store: the open store.
        name: the card's name.
        sha256: the 64-hex identity of the version the reviewer read (its bundle digest).
        private: the reviewer's private key (its public key must be trusted here).
        note: free text kept in the signed statement.
        accept: ids of error findings the reviewer read and accepts (a security skill quoting
            an attack); recorded inside the signed statement. Any other error still blocks.
        allow_downgrade: the version is older than what the name has been, and the reviewer
            means to move the name back: the approval says so (signed), and takes effect when
            as many reviewers as the threshold have said it.
        expires: when the approval stops counting (ISO 8601 UTC); "" never; None the store's
            default (``set_default_expiry``), if any.

    Returns:
        What was recorded and the version's status afterwards.

    Raises:
        UnknownCardError, UnknownVersionError, UntrustedKeyError, TamperedBlobError,
        RejectedError, LintBlockedError, DowngradeError: the refusal, by type.
    """
    return _decide(
        store,
        name,
        sha256,
        private,
        "approve",
        note,
        tuple(accept),
        allow_downgrade=allow_downgrade,
        expires=expires,
    )


def reject(store: Store, name: str, sha256: str, private, reason: str) -> Decision:
    """Sign and store a rejection of exactly these bytes; the version becomes ``rejected``.

    Args and raises as ``approve`` (``reason`` is required: UsageError when blank).
    """
    if not reason.strip():
        raise UsageError("a rejection needs a --reason")
    return _decide(store, name, sha256, private, "reject", reason)


def retire(store: Store, name: str, sha256: str | None = None, reason: str = "") -> Change:
    """Withdraw a version (the active one by default) from use. Not a security verdict.

    Returns:
        The status change.

    Raises:
        UnknownCardError: no card of that name.
        UnknownVersionError: no such version (or no active one, when ``sha256`` is None).
        StatusChangeError: the version is rejected or already retired.
    """
    with store.transaction() as conn:
        if sha256 is None:
            version = store.active(name)
            if version is None and not store.versions(name=name):
                raise UnknownCardError(f"no card named {name!r} in the store")
            if version is None:
                raise UnknownVersionError(
                    f"{name!r} has no active version to retire (give --digest)"
                )
        else:
            sha = resolve_version(store, name, sha256, option="--digest", verb="retire").sha256
            version = store.version(name, sha)
            if version is None:
                raise UnknownVersionError(f"no version of {name!r} has sha256 {sha[:16]}…")
        sha, status = version.sha256, version.status
        if status == "rejected":
            raise StatusChangeError(
                f"{name} {sha[:12]} is rejected; retiring would hide the verdict"
            )
        if status == "retired":
            raise StatusChangeError(f"{name} {sha[:12]} is already retired")
        changes: list[Change] = []
        _set_status(store, conn, name, sha, status, "retired", reason or "retired", changes)
    return changes[-1]
