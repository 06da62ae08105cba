"""Review: look at a pending card, then approve, reject or retire it with a signed statement.

``approve`` and ``reject`` sign a review statement (see ``trust``) over the SHA-256 the reviewer
typed — which must be the stored version's hash, so you approve the bytes you read, not whatever is
there now — store it, and let ``reconcile`` apply the trust policy: a version whose trusted,
distinct approvals reach the threshold becomes ``active`` (the previously active version of the
name is kept as history with status ``retired`` and reason "superseded by …"); any trusted
rejection makes it ``rejected``, and a rejected version never comes back, whatever is imported.
``retire`` withdraws a version from use without a security verdict and needs no key.

Statements travel with the card: ``write_statements`` puts them in ``approvals.jsonl`` beside an
exported SKILL.md, and ``import_statements`` reads that file when a card folder is imported,
keeping only statements about exactly the imported bytes. ``verify_check`` is what ``verify``
adds to its report.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chimera_cards.atomic import write_atomic
from chimera_cards.bundle import SKILL_FILE, Bundle, diff_bundles
from chimera_cards.card import CardParseError, parse_card
from chimera_cards.codescan import BundleScan, finding_id, lint_bundle, scan_bundle
from chimera_cards.errors import (
    ApprovalsFileError,
    LintBlockedError,
    RejectedError,
    StatementError,
    StatusChangeError,
    TamperedBlobError,
    TrustConflictError,
    UnknownCardError,
    UnknownVersionError,
    UnsafeTargetError,
    UntrustedKeyError,
    UsageError,
)
from chimera_cards.importhooks import APPROVALS_FILENAME
from chimera_cards.integrity import parse_sha256, sha256_hex
from chimera_cards.keys import (
    EnvelopeError,
    check_key_name,
    parse_envelope,
    parse_public_key,
    public_of,
)
from chimera_cards.lint import reveal
from chimera_cards.retrieve import is_clean_path, prompt_preview
from chimera_cards.store import SUPERSEDED, THRESHOLD_SETTING, Problem, Store
from chimera_cards.trust import (
    TrustedKey,
    Verdict,
    check_statement,
    evaluate,
    evaluate_remembered,
    get_threshold,
    make_statement,
    peek_statement,
    sign_statement,
    trusted_keys,
)
from chimera_cards.urls import is_url

MAX_APPROVALS_FILE_BYTES = 1024 * 1024


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
    """Ids of the error findings that no trusted approval accepted (empty: nothing blocks)."""
    ok = set(accepted)
    return [
        finding_id(f)
        for f in findings
        if isinstance(f, dict) and f.get("severity") == "error" and finding_id(f) not in ok
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
    if new_ok is not None and old_ok is None:
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
            "sha256": self.sha256,
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


def reconcile(
    store: Store,
    conn: sqlite3.Connection,
    names: list[str] | None = None,
    *,
    approved_now: str | None = None,
) -> list[Change]:
    """Bring statuses in line with the statements, trust list and threshold (inside a transaction).

    pending + approved (and no lint errors) -> active, superseding the active one — but a version
    older than the active one is only activated when a reviewer approves it right now
    (``approved_now``), never as a side effect of a trust change or an import (no silent
    rollback); pending/active + a trusted rejection -> rejected; active by approval but no longer
    approved (a key removed, the threshold raised) -> pending. Clean path imports need no approval.
    """
    if names is None:
        # Every version: one that cannot be read is left as it is rather than blocking the rest.
        candidates, _ = store.versions_tolerant(statuses=("pending", "active"))
    else:
        candidates = store.versions(statuses=("pending", "active"), names=names, order="id")
    trusted = trusted_keys(store)
    threshold = get_threshold(store)
    changes: list[Change] = []
    for version in candidates:
        vid, name, sha = version.id, version.name, version.sha256
        # Re-read: an earlier version in this loop may have superseded this one.
        status = store.status_of(vid)
        if status not in ("pending", "active"):
            continue
        # Through the store's memo, kept in this same transaction: check and install then find
        # the verdict without verifying the signatures again.
        (verdict,), fresh = evaluate_remembered(
            store, [(name, sha, store.envelopes(sha))], trusted, threshold
        )
        store.remember_verdicts(fresh)
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
            and not _lint_errors(version.findings, verdict.accepted)
        ):
            current = store.active(name)
            if current is not None and current.id > vid and sha != approved_now:
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
                {"approvers": verdict.approvers},
            )
        elif status == "active" and not clean and not verdict.approved:
            _set_status(
                store,
                conn,
                name,
                sha,
                "active",
                "pending",
                "approvals no longer meet the trust policy "
                f"({len(verdict.approvers)} of {threshold})",
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
        return {**asdict(self), "changes": [c.to_dict() for c in self.changes]}


def _decide(
    store: Store,
    name: str,
    sha256: str,
    private,
    decision: str,
    note: str,
    accept: Iterable[str] = (),
) -> Decision:
    sha = parse_sha256(sha256)
    keyid = public_of(private).keyid
    with store.transaction() as conn:
        version = store.version(name, sha)
        if version is None:
            if not store.versions(name=name):
                raise UnknownCardError(f"no card named {name!r} in the store")
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
            known = {finding_id(f) for f in version.findings if isinstance(f, dict)}
            unknown = sorted(set(accept) - known)
            if unknown:
                raise UsageError(
                    f"--accept {unknown[0]}: no such finding on {name} {sha[:12]} "
                    "(ids are listed by `chimera-cards review`)"
                )
            blocking = _lint_errors(version.findings, accept)
            if blocking:
                listed = ", ".join(blocking[:5]) + (" …" if len(blocking) > 5 else "")
                raise LintBlockedError(
                    f"{name} {sha[:12]} has lint errors ({listed}); fix the skill and import it "
                    "again, or accept each by id with --accept if it is a true positive you read"
                )
        elif accept:
            raise UsageError("--accept goes with approve, not reject")
        st = make_statement(name, sha, decision, keyid, note, tuple(accept))
        recorded = store_statement(store, sign_statement(private, st))
        store.append_audit(
            conn,
            decision,
            name,
            sha,
            {"reviewer": keyid, "note": note, **({"accepted": sorted(accept)} if accept else {})},
        )
        changes: list[Change] = []
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


def approve(
    store: Store,
    name: str,
    sha256: str,
    private,
    note: str = "",
    *,
    accept: Iterable[str] = (),
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

    Returns:
        What was recorded and the version's status afterwards.

    Raises:
        UnknownCardError, UnknownVersionError, UntrustedKeyError, TamperedBlobError,
        RejectedError, LintBlockedError: the refusal, by type.
    """
    return _decide(store, name, sha256, private, "approve", note, tuple(accept))


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
        UnknownVersionError: no such version (or no active one, when ``sha256`` is None).
        StatusChangeError: the version is rejected or already retired.
    """
    with store.transaction() as conn:
        if sha256 is None:
            version = store.active(name)
            if version is None:
                raise UnknownVersionError(
                    f"{name!r} has no active version to retire (give --sha256)"
                )
        else:
            sha = parse_sha256(sha256)
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


# --- the review screen ------------------------------------------------------------------------


@dataclass
class ReviewView:
    """Everything a reviewer sees of one version before deciding."""

    name: str
    sha256: str
    status: str
    provenance: str
    origin: str
    final_url: str | None
    reason: str | None
    prompt_text: str  # exactly what a model would be given once the version is usable
    findings: list[dict]  # lint + hidden-instruction findings, messages with hidden chars revealed
    diff_against: str | None  # sha256 of the last approved version of the name, if any
    diff: str  # per-file unified diffs (hidden chars revealed), "" when nothing to compare
    verdict: dict
    digest: str = ""  # the bundle digest
    manifest: list[dict] = field(default_factory=list)  # every file: path, executable, size, sha
    files: list[dict] = field(default_factory=list)  # every file, text revealed (not binaries)
    changes: dict = field(default_factory=dict)  # added/removed/changed/mode_changed vs the base
    accepted: list[str] = field(default_factory=list)  # finding ids accepted in signed approvals

    @property
    def revealed_prompt_text(self) -> str:
        return reveal(self.prompt_text)

    def to_dict(self) -> dict:
        return {**asdict(self), "revealed_prompt_text": self.revealed_prompt_text}


@dataclass
class QueueItem:
    """A version waiting for review, with why it waits."""

    name: str
    sha256: str
    provenance: str
    origin: str
    reason: str | None
    approvals: int
    threshold: int

    def to_dict(self) -> dict:
        return asdict(self)


class ReviewQueue(list):
    """The pending versions (a plain list of ``QueueItem``), plus ``skipped``: one line per
    pending version whose row or statements cannot be read (it is left out; the rest are listed)."""

    def __init__(self, items=(), skipped: list[str] | None = None) -> None:
        super().__init__(items)
        self.skipped: list[str] = skipped if skipped is not None else []


def review_queue(store: Store) -> ReviewQueue:
    """Every pending version, by name, with how many trusted approvals it has so far.

    Returns:
        The queue; versions that cannot be read are named in its ``skipped`` list instead.
    """
    with store.snapshot():
        # The trust list and threshold once for the whole queue, not once per pending version.
        trusted, threshold = trusted_keys(store), get_threshold(store)
        pending, skipped = store.versions_tolerant(status="pending")
        out = ReviewQueue(skipped=[f"skipped: {text}" for text in skipped])
        for v in sorted(pending, key=lambda v: (v.name, v.id)):
            try:
                envelopes = store.envelopes(v.sha256)
            except sqlite3.Error as exc:
                out.skipped.append(
                    f"skipped {v.name} {v.sha256[:12]}: statements unreadable ({exc})"
                )
                continue
            verdict = evaluate(
                envelopes,
                trusted,
                name=v.name,
                sha256=v.sha256,
                threshold=threshold,
            )
            out.append(
                QueueItem(
                    v.name,
                    v.sha256,
                    v.provenance,
                    v.final_url or v.origin,
                    v.reason,
                    len(verdict.approvers),
                    threshold,
                )
            )
        return out


_SURROGATE = re.compile("[\ud800-\udfff]")


def _printable(text: str) -> str:
    # A lone surrogate cannot be encoded, printed or sent anywhere: show it as <U+XXXX> so the
    # reviewer sees it (the gate never serves such a card).
    return _SURROGATE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def _last_approved(store: Store, name: str, exclude: str) -> str | None:
    current = store.active(name)
    if current is not None and current.sha256 != exclude:
        return current.sha256
    # No other active one: the most recent version that was once in use.
    retired = store.last_retired(name, exclude=exclude)
    return retired.sha256 if retired else None


def review_view(store: Store, name: str, sha256: str | None = None) -> ReviewView:
    """What a reviewer must see before deciding: the prompt text, findings, diff and verdict.

    Args:
        store: the open store.
        name: the card's name.
        sha256: which version (64 hex digits); the newest pending one when None.

    Raises:
        UnknownCardError, UnknownVersionError: nothing to show.
        TamperedBlobError: the stored bytes do not hash to their SHA-256.
    """
    with store.snapshot():
        return _review_view(store, name, sha256)


def _file_views(bundle: Bundle, scan: BundleScan) -> list[dict]:
    kinds = {r.path: r for r in scan.files}
    out = []
    for f in bundle.files:
        report = kinds[f.path]
        view = {**f.to_dict(), "kind": report.kind}
        if report.kind == "binary":
            view["type"] = report.type
        else:
            view["language"] = report.language
            view["text"] = _printable(reveal(bundle.contents[f.path].decode("utf-8")))
        out.append(view)
    return out


def _file_diffs(old: Bundle, new: Bundle, name: str, old_sha: str, new_sha: str) -> str:
    """Unified diffs of every added, removed or changed text file (hidden chars revealed)."""

    def lines(bundle: Bundle, path: str) -> list[str]:
        data = bundle.contents.get(path)
        if data is None:
            return []
        if b"\0" in data:
            return [f"(binary, {len(data)} bytes, sha256 {sha256_hex(data)})\n"]
        return reveal(data.decode("utf-8", "replace")).splitlines(keepends=True)

    change = diff_bundles(old, new)
    out = []
    for path in sorted({*change.added, *change.removed, *change.changed}, key=str.encode):
        out.append(
            "".join(
                difflib.unified_diff(
                    lines(old, path),
                    lines(new, path),
                    fromfile=f"{name}@{old_sha[:12]}/{path}",
                    tofile=f"{name}@{new_sha[:12]}/{path}",
                )
            )
        )
    for path in change.mode_changed:
        was = old.file(path)
        mode = "755 -> 644" if was is not None and was.executable else "644 -> 755"
        out.append(f"mode {mode}: {path}\n")
    return "".join(out)


def _review_view(store: Store, name: str, sha256: str | None) -> ReviewView:
    if sha256 is None:
        pending = store.versions(name=name, status="pending")
        if not pending:
            if not store.versions(name=name):
                raise UnknownCardError(f"no card named {name!r} in the store")
            raise UnknownVersionError(
                f"{name!r} has no pending version; give --sha256 to review another"
            )
        sha = pending[-1].sha256
    else:
        sha = parse_sha256(sha256)
    version = store.version(name, sha)
    if version is None:
        raise UnknownVersionError(f"no version of {name!r} has sha256 {sha[:16]}…")
    bundle = store.get_bundle(version)  # every file re-hashed (TamperedBlobError)
    data = bundle.skill_md
    try:
        card = parse_card(data)
    except CardParseError as exc:
        raise TamperedBlobError(f"stored card {name} does not parse: {exc}") from None
    scan = scan_bundle(bundle)
    findings = [f.to_dict() for f in lint_bundle(card, bundle, dirname=None)]
    for f in findings:
        f["id"] = finding_id(f)  # from the finding as found, before its message is revealed
        f["message"] = _printable(reveal(f["message"]))
    verdict = verdict_for(store, name, sha)
    text = prompt_preview(
        name,
        sha,
        version.provenance,
        version.final_url or version.origin,
        data,
        approvals=max(len(verdict.approvers), verdict.threshold),
        files=[(f.path, f.size) for f in bundle.files if f.path != SKILL_FILE],
    )
    base = _last_approved(store, name, sha)
    diff = ""
    changes: dict = {}
    if base is not None:
        old_version = store.version(name, base)
        old = store.get_bundle(old_version) if old_version is not None else None
        if old is not None:
            diff = _file_diffs(old, bundle, name, base, sha)
            changes = diff_bundles(old, bundle).to_dict()
    text, diff = _printable(text), _printable(diff)
    return ReviewView(
        name=name,
        sha256=sha,
        status=version.status,
        provenance=version.provenance,
        origin=version.origin,
        final_url=version.final_url,
        reason=version.reason,
        prompt_text=text,
        findings=findings,
        diff_against=base,
        diff=diff,
        verdict=verdict.to_dict(),
        digest=version.digest,
        manifest=[f.to_dict() for f in bundle.files],
        files=_file_views(bundle, scan),
        changes=changes,
        accepted=accepted_findings(store, name, sha),
    )


# --- portable statements ----------------------------------------------------------------------


def write_statements(
    store: Store, name: str, sha256: str, directory: str | os.PathLike
) -> Path | None:
    """Write every stored statement about (name, sha256) as ``approvals.jsonl`` in ``directory``.

    Registered in ``store.EXPORT_HOOKS``, so ``export`` writes it beside the SKILL.md; returns
    the file, or None when there is nothing to write (a stale approvals file from an earlier
    export of other bytes is then removed, so the folder never carries someone else's approval).
    The file is written to a temporary name and renamed: whole or absent.
    """
    with store.snapshot():
        envelopes = store.envelopes(sha256, name)
    path = Path(directory) / APPROVALS_FILENAME
    if not envelopes:
        if path.is_file() and not path.is_symlink():
            path.unlink()
        return None
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise UnsafeTargetError(
            f"{path}: exists and is not a regular file; refusing to write there"
        )
    lines = [
        json.dumps(json.loads(env), sort_keys=True, separators=(",", ":")) for env in envelopes
    ]
    write_atomic(path, ("\n".join(lines) + "\n").encode("utf-8"))
    return path


@dataclass
class StatementImport:
    """What importing signed statements did to one card's versions."""

    accepted: int = 0  # statements that verify over these bytes under this store's trust list
    kept_unverified: int = 0  # well-formed for these bytes but not (yet) by a trusted key
    about_this_card: int = 0  # well-formed statements naming this card, for any bytes
    problems: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {**asdict(self), "changes": [c.to_dict() for c in self.changes]}


def read_statements_file(path: Path) -> list[str]:
    """Read an ``approvals.jsonl`` file, bounded in size.

    Args:
        path: the file beside an imported or exported card.

    Returns:
        Its non-blank lines, each one DSSE envelope as JSON text (verified later, not here).
    """
    try:
        if path.stat().st_size > MAX_APPROVALS_FILE_BYTES:
            raise ApprovalsFileError(f"{path} is larger than 1 MiB")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ApprovalsFileError(f"cannot read {path}: {exc}") from None
    return [line for line in text.splitlines() if line.strip()]


def import_statements(
    store: Store, source: str | os.PathLike, name: str, sha256: str
) -> StatementImport | None:
    """Read ``approvals.jsonl`` (``source`` is the file or the card folder holding it) and apply
    it to (name, sha256), in one transaction. None when there is no such file.
    See ``apply_statements``.
    """
    path = Path(source)
    if not path.is_file():
        path = path / APPROVALS_FILENAME
    if not path.is_file():
        return None
    lines = read_statements_file(path)
    with store.transaction() as conn:
        return apply_statements(store, conn, lines, name, sha256, label=path.name)


def apply_statements(
    store: Store,
    conn: sqlite3.Connection,
    lines: list[str],
    name: str,
    sha256: str,
    *,
    label: str = APPROVALS_FILENAME,
) -> StatementImport:
    """Keep the statements about exactly (name, sha256) and re-apply the trust policy.

    Statements about other bytes or other names are dropped (reported), never stored: a signature
    copied next to different bytes proves nothing about them. Statements for these bytes are kept
    even if their key is not trusted here yet, so adding the key later (``trust add``) counts them.
    """
    result = StatementImport()
    trusted = trusted_keys(store)
    threshold = get_threshold(store)
    for i, line in enumerate(lines, 1):
        try:
            parse_envelope(line)
        except EnvelopeError as exc:
            result.problems.append(f"{label} line {i}: {exc}")
            continue
        claimed = peek_statement(line)
        if claimed is None:
            result.problems.append(f"{label} line {i}: not a chimera review statement")
            continue
        if claimed.name == name:
            result.about_this_card += 1
        if claimed.sha256.lower() != sha256 or claimed.name != name:
            result.problems.append(
                f"{label} line {i}: statement is for {claimed.name} {claimed.sha256[:12]}, "
                f"not these bytes ({name} {sha256[:12]}); ignored"
            )
            continue
        v = evaluate([line], trusted, name=name, sha256=sha256, threshold=threshold)
        if v.problems and claimed.reviewer in {k.keyid for k in trusted}:
            # Claims a reviewer we trust but does not verify: a forgery, not worth keeping.
            result.problems.append(f"{label} line {i}: {v.problems[0]}; dropped")
            continue
        if v.problems:
            result.kept_unverified += 1
            result.problems.append(f"{label} line {i}: {v.problems[0]}")
        else:
            result.accepted += 1
        if store_statement(store, line):
            store.append_audit(
                conn,
                "statement-imported",
                name,
                sha256,
                {
                    "decision": claimed.decision,
                    "reviewer": claimed.reviewer,
                    "verified": not v.problems,
                },
            )
    result.changes = reconcile(store, conn, [name])
    return result


def import_hook(store: Store, conn: sqlite3.Connection, candidate, version, new: bool):
    """``importer.IMPORT_HOOKS`` entry: honour an ``approvals.jsonl`` shipped beside a SKILL.md.

    Runs inside the import's transaction for path imports, and for skills read out of an
    archive or a git repository that carries the file at the skill's top (a bare card URL names
    one file, never its approvals); statements count only if a trusted key signed these bytes.
    A folder whose approvals name this card but do not approve these exact bytes (an exported
    card edited afterwards) imports as ``pending``, even from a clean path. An
    unreadable or oversized approvals file counts for nothing: the card imports as it would
    without one (pending, if tainted), which is the safe side.
    """
    shipped = getattr(candidate, "approvals", None)
    if shipped is not None:
        # Inside an archive or repository, beside the skill: signatures decide, not the channel.
        if len(shipped) > MAX_APPROVALS_FILE_BYTES:
            return None
        try:
            lines = [ln for ln in shipped.decode("utf-8").splitlines() if ln.strip()]
        except UnicodeDecodeError:
            return None
        label = f"{version.origin} {APPROVALS_FILENAME}"
    else:
        file = getattr(candidate, "file", None)
        if file is None or is_url(version.origin):
            return None
        # os.path rather than pathlib: this runs for every card of a folder import, and nearly
        # always finds nothing (isfile is False for a missing file and for any error reaching it).
        approvals = os.path.join(os.path.dirname(file), APPROVALS_FILENAME)
        if not os.path.isfile(approvals):
            return None
        try:
            lines = read_statements_file(Path(approvals))
        except ApprovalsFileError:
            return None
        label = approvals
    name, sha = version.name, version.sha256
    result = apply_statements(store, conn, lines, name, sha, label=label)
    now = store.version(name, sha)  # same connection: sees this transaction
    if (
        new
        and now is not None
        and now.status == "active"
        and result.about_this_card
        and not verdict_for(store, name, sha).approved
    ):
        # The folder carries approvals for this card, but not for these bytes: it was edited
        # after review (or its reviewer is not trusted here). Hold it, and give back the active
        # place to the version this import had just superseded.
        superseded = store.last_retired(name, reason=f"superseded by {sha[:12]}")
        store.set_status(
            conn,
            name,
            sha,
            "pending",
            f"{APPROVALS_FILENAME} beside it does not approve these bytes "
            "(edited after review, or reviewer not trusted here): needs review",
        )
        if superseded is not None:
            store.set_status(
                conn,
                name,
                superseded.sha256,
                "active",
                f"restored: the import of {sha[:12]} was held for review",
            )
        now = store.version(name, sha)
    return now


def verify_check(store: Store, conn: sqlite3.Connection) -> list[Problem]:
    """``verify``'s signature check (registered in ``store.EXTRA_VERIFY_CHECKS``): every stored
    statement by a trusted key must verify over the bytes it is stored with. (Whether an active
    version still meets the trust policy is the gate's question, asked on every read.)

    Returns:
        One Problem per mismatch or invalid signature.
    """
    trusted = trusted_keys(store)
    trusted_ids = {k.keyid for k in trusted}
    threshold = get_threshold(store)
    problems: list[Problem] = []
    by_sha: dict[str, list[tuple[str, str]]] = {}
    for name, sha, env in store.all_statements():
        by_sha.setdefault(sha, []).append((name, env))
    for name, sha in store.version_keys():
        envs = [e for n, e in by_sha.get(sha, []) if n == name]
        if not envs:
            continue  # nothing signed over this version; check_blobs already re-hashed its bytes
        label = f"{name} {sha[:12]}"
        version = store.version(name, sha)  # only versions with statements are read
        try:
            if version is None:
                raise TamperedBlobError("its version row is gone")
            store.get_bundle(version)
        except TamperedBlobError as exc:
            problems.append(
                Problem(
                    "signature-mismatch",
                    f"{label}: signed statement(s) over {sha[:12]} do not match the stored "
                    f"bytes ({exc})",
                    name,
                    sha,
                )
            )
        for env in envs:
            claimed = peek_statement(env)
            if claimed is None or claimed.reviewer not in trusted_ids:
                continue  # a key not trusted here says nothing either way
            v = evaluate([env], trusted, name=name, sha256=sha, threshold=threshold)
            if v.problems:
                problems.append(
                    Problem("signature-invalid", f"{label}: {v.problems[0]}", name, sha)
                )
    return problems


def format_view(v: ReviewView) -> str:
    """The review screen as text: what `chimera-cards review NAME` prints and the demo shows."""
    out = [
        f"card:       {v.name}",
        f"sha256:     {v.sha256}",
        f"status:     {v.status}" + (f" ({v.reason})" if v.reason else ""),
        f"provenance: {v.provenance}",
        f"origin:     {v.origin}"
        + (f" -> {v.final_url}" if v.final_url and v.final_url != v.origin else ""),
        f"approvals:  {len(v.verdict['approvers'])} of {v.verdict['threshold']} required",
        "",
        f"== manifest: {len(v.manifest)} file(s), bundle digest {v.digest} ==",
    ]
    for f in v.manifest:
        mode = "755" if f["executable"] else "644"
        out.append(f"{mode} {f['size']:>9} {f['sha256']}  {f['path']}")
    out += [
        "",
        "== what an agent would be given once approved (hidden characters shown as <U+XXXX>) ==",
        v.revealed_prompt_text.rstrip("\n"),
    ]
    for f in v.files:
        if f["path"] == SKILL_FILE:
            continue
        if f["kind"] == "binary":
            out += ["", f"== {f['path']}: binary, {f['size']} bytes, {f['type']}, {f['sha256']} =="]
            continue
        what = f"script ({f['language']})" if f["kind"] == "script" else "text"
        out += ["", f"== {f['path']}: {what}, {f['size']} bytes (hidden characters shown) =="]
        out.append(f["text"].rstrip("\n"))
    out += ["", f"== findings ({len(v.findings)}) =="]
    for f in v.findings:
        mark = " (accepted)" if f.get("id") in v.accepted else ""
        out.append(f"{f['severity']} {f.get('id')} {f['message']}{mark}")
    if not v.findings:
        out.append("none")
    out.append("")
    if v.diff_against:
        c = v.changes
        summary = ", ".join(
            f"{len(c.get(k, []))} {label}"
            for k, label in (
                ("added", "added"),
                ("removed", "removed"),
                ("changed", "changed"),
                ("mode_changed", "mode changed"),
            )
        )
        out.append(f"== diff against last approved version {v.diff_against[:12]} ({summary}) ==")
        out.append(v.diff.rstrip("\n") or "(identical files)")
    else:
        out.append("== diff: no earlier approved version of this name ==")
    out.append("")
    out.append(f"approve with: chimera-cards approve {v.name} --key KEYFILE --sha256 {v.sha256}")
    return "\n".join(out)
