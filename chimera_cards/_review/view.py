"""The review screen and queue: what a reviewer sees before deciding."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta

from chimera_cards._bundles.bundle import SKILL_FILE, Bundle, diff_bundles
from chimera_cards._cards.card import CardParseError, parse_card
from chimera_cards._retrieve.render import prompt_preview
from chimera_cards._review.decisions import accepted_findings, verdict_for
from chimera_cards._review.refs import resolve_version
from chimera_cards._review.screen import format_screen, unified_diff
from chimera_cards._review.supersession import standing
from chimera_cards._scan.codescan import BundleScan, finding_id, lint_bundle, scan_bundle
from chimera_cards._scan.hiddenchars import reveal
from chimera_cards._store.facade import Store
from chimera_cards._trust.freshness import parse_time
from chimera_cards._trust.policy import (
    evaluate,
    evaluate_remembered,
    get_threshold,
    is_clean_path,
    trusted_keys,
)
from chimera_cards._util.integrity import digest_keys, sha256_hex
from chimera_cards.errors import (
    TamperedBlobError,
    UnknownCardError,
    UnknownVersionError,
)

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
    downgrade: str = ""  # why approving it would move the name back ("" when it would not)
    expired: list[str] = field(default_factory=list)  # reviewers whose approval has expired
    # Other scanners' stored runs (SARIF plug-ins), each with its findings, by scanner name.
    scanners: list[dict] = field(default_factory=list)

    @property
    def revealed_prompt_text(self) -> str:
        return reveal(self.prompt_text)

    def to_dict(self) -> dict:
        return digest_keys({**asdict(self), "revealed_prompt_text": self.revealed_prompt_text})


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
    downgrade: str = ""  # why it is held as a downgrade ("" when it is not one)

    def to_dict(self) -> dict:
        return digest_keys(asdict(self))


@dataclass
class ExpiringApproval:
    """An active version whose approvals expire soon, or have expired (it is then not served)."""

    name: str
    sha256: str
    expires: str | None  # when its approvals stop reaching the threshold
    expired: bool

    def to_dict(self) -> dict:
        return digest_keys(asdict(self))

    def line(self) -> str:
        if self.expired:
            return (
                f"expired\t{self.name}\t{self.sha256}\tnot served until it is approved again "
                f"(chimera-cards approve {self.name} --digest {self.sha256})"
            )
        return f"expires\t{self.name}\t{self.sha256}\t{self.expires}"


def expiring_approvals(store: Store, within: timedelta) -> list[ExpiringApproval]:
    """Active versions whose approvals expire within ``within`` from now, or already have.

    Args:
        store: the open store.
        within: how far ahead to look.
    Returns:
        By expiry (expired ones first), then name. A clean local import needs no approval, so
        it is never listed.
    """
    now = datetime.now(UTC)
    with store.snapshot():
        trusted, threshold = trusted_keys(store), get_threshold(store)
        active = [
            v
            for v in store.versions(status="active")
            if not is_clean_path(v.origin, v.final_url, v.provenance)
        ]
        signed = store.envelopes_of(v.sha256 for v in active)
        items = [(v.name, v.sha256, signed.get(v.sha256, [])) for v in active]
        verdicts, _ = evaluate_remembered(store, items, trusted, threshold)
    out = []
    for version, verdict in zip(active, verdicts, strict=True):
        if not verdict.approved:
            if verdict.expired:
                out.append(ExpiringApproval(version.name, version.sha256, None, True))
            continue
        when = parse_time(verdict.valid_until) if verdict.valid_until else None
        if when is not None and when <= now + within:
            out.append(ExpiringApproval(version.name, version.sha256, verdict.valid_until, False))
    return sorted(out, key=lambda e: (not e.expired, e.expires or "", e.name))


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
            place = standing(store, v, trusted, threshold)
            out.append(
                QueueItem(
                    v.name,
                    v.sha256,
                    v.provenance,
                    v.final_url or v.origin,
                    v.reason,
                    len(verdict.approvers),
                    threshold,
                    place.reason(),
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
            unified_diff(
                lines(old, path),
                lines(new, path),
                fromfile=f"{name}@{old_sha[:12]}/{path}",
                tofile=f"{name}@{new_sha[:12]}/{path}",
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
                f"{name!r} has no pending version; give --digest to review another"
            )
        sha = pending[-1].sha256
    else:
        sha = resolve_version(store, name, sha256, verb="review").sha256
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
        downgrade=standing(store, version, trusted_keys(store), verdict.threshold).reason(),
        expired=verdict.expired,
        scanners=_scanner_views(store.scanner_results(version.id)),
    )


def _scanner_views(runs: list[dict]) -> list[dict]:
    """Stored scanner runs with their messages as a reviewer must read them (hidden characters
    a scanner quoted from the skill shown, not passed to the terminal)."""
    for run in runs:
        run["reason"] = _printable(reveal(run["reason"] or ""))
        for f in run["findings"]:
            f["id"] = finding_id(f)
            f["message"] = _printable(reveal(str(f.get("message", ""))))
    return runs


def _format_scanners(v: ReviewView) -> list[str]:
    out: list[str] = []
    for run in v.scanners:
        tool = " ".join(t for t in (run.get("tool"), run.get("tool_version")) if t)
        shown = [f for f in run["findings"] if f.get("severity") in ("error", "warning")]
        head = f"== scanner {run['scanner']}" + (f" ({tool})" if tool else "")
        if run["status"] != "ok":
            out += ["", f"{head}: FAILED, {run['reason']} (holds the version) =="]
        else:
            infos = len(run["findings"]) - len(shown)
            out += ["", f"{head}: {len(shown)} error/warning finding(s), {infos} info =="]
        # Errors first: they are what holds the version.
        for f in sorted(shown, key=lambda f: f.get("severity") != "error"):
            where = f.get("path") or ""
            where += f":{f['line']}" if where and f.get("line") else ""
            mark = " (accepted)" if f.get("id") in v.accepted else ""
            out.append(
                f"{f['severity']} {f.get('id')} " + (f"{where} " if where else "")
                + f"{f['message']}{mark}"
            )  # fmt: skip
    return out


def format_view(v: ReviewView, *, files: bool = False) -> str:
    """The review screen as text: what `chimera-cards review NAME` prints and the demo shows.

    Args:
        v: the view.
        files: every file in full, not only the diff against the last approved version.
    Returns:
        The screen (``review.screen.format_screen``), other scanners' runs after our findings.
    """
    return format_screen(v, files=files, after_findings=_format_scanners(v))
