"""``verify_store``: re-hash every blob, walk the audit chain and replay it against the rows."""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

from chimera_cards._bundles.manifest import BundleFile, manifest_bytes
from chimera_cards._store.anchor import expected_head_problem
from chimera_cards._store.audit import GENESIS_HASH, audit_hash
from chimera_cards._store.blobs import _file_row
from chimera_cards._store.facade import Store
from chimera_cards._store.statements import EXPIRES_SETTING, THRESHOLD_SETTING, TRUST_EVENTS
from chimera_cards._util.integrity import is_hex
from chimera_cards.errors import (
    ChimeraError,
    StoreWriteError,
    UsageError,
)

# Extra checks run by verify_store after the built-in ones, as "module:function" so a later
# module (e.g. signed review statements) can add one without this module importing it. Each is
# called as fn(store, conn) and returns an iterable of Problem.
# Review: stored signatures must match the bytes they are about.
# Trust: every verdict the store remembers must be what its statements verify to now.
EXTRA_VERIFY_CHECKS: tuple[str, ...] = (
    "chimera_cards._review.statements:verify_check",
    "chimera_cards._trust.policy:check_remembered_verdicts",
    "chimera_cards._scan.external:verify_check",
)


@dataclass
class Problem:
    """One thing verify found wrong; ``kind`` is a stable id, ``message`` says what and where."""

    kind: str
    message: str
    name: str | None = None
    sha256: str | None = None
    seq: int | None = None

    def to_dict(self) -> dict:
        return {key: value for key, value in asdict(self).items() if value is not None}


@dataclass
class VerifyReport:
    """``verify_store``'s answer: what was checked and every problem found."""

    ok: bool
    blobs: int
    bytes: int
    versions: int
    audit_entries: int
    problems: list[Problem]
    head: str  # hash of the last audit entry before this verification was recorded
    seconds: float = 0.0
    recorded: bool = False  # whether the outcome was appended to the audit log

    def to_dict(self) -> dict:
        data = asdict(self)
        data["problems"] = [problem.to_dict() for problem in self.problems]
        return data


# -- verification ---------------------------------------------------------------------------


def check_blobs(store: Store, conn: sqlite3.Connection) -> tuple[list[Problem], int, int]:
    """Re-hash every blob: its bytes must hash to its key and match its recorded size."""
    problems: list[Problem] = []
    count = total = 0
    sha256 = hashlib.sha256
    # One row at a time on purpose: each 4 KB blob is hashed while it is still in the CPU cache,
    # and its memory is reused for the next (fetching many at once measured slower here).
    for key, size, data in conn.execute("SELECT sha256, size, CAST(data AS BLOB) FROM blobs"):
        count += 1
        total += len(data)
        if sha256(data).hexdigest() != key:
            problems.append(
                Problem("blob-hash", f"blob {key}: its bytes do not hash to its key", sha256=key)
            )
        if size != len(data):
            problems.append(
                Problem(
                    "blob-size", f"blob {key}: recorded size {size}, actual {len(data)}", sha256=key
                )
            )
    return problems, count, total


# Audit rows fetched per call by the chain check (small rows; blobs are read one at a time).
_VERIFY_CHUNK = 512
# The parser json.loads uses; called directly (see _detail_object) to skip loads' wrappers.
_scan_json = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _detail_object(detail):
    """``json.loads(detail)`` if it is a JSON object, else None — the same answer as loads,
    without its wrapper calls for the usual case: a str that is exactly one object."""
    if type(detail) is str and detail[:1] == "{" and detail[-1:] == "}":
        try:
            value, end = _scan_json(detail, 0)
        except (ValueError, StopIteration):
            value, end = None, -1
        if end == len(detail):
            return value  # scan_once always returns a dict for text starting with "{"
    try:
        value = json.loads(detail)
    except (ValueError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def check_audit_chain(store: Store, conn: sqlite3.Connection) -> tuple[list[Problem], int, dict]:
    """Walk the chain: contiguous seq from 1, each prev_hash the hash before it, each hash right.
    Returns the problems, the entry count, and, replaying the log, the state of every version it
    records: {(name, sha256): [id, status, provenance, seq of its import entry, reason]}: the
    reason is what the import, then each status change, wrote (None when the entry has none)."""
    problems: list[Problem] = []
    state: dict[tuple[str, str], list] = {}
    prev = GENESIS_HASH
    expected_seq = 1
    count = 0
    detail_object = _detail_object
    cursor = conn.execute(
        "SELECT seq, ts, event, name, sha256, detail, prev_hash, hash FROM audit ORDER BY seq"
    )
    while rows := cursor.fetchmany(_VERIFY_CHUNK):
        count += len(rows)
        for seq, ts, event, name, sha, detail, prev_hash, digest in rows:
            if seq != expected_seq:
                problems.append(
                    Problem(
                        "audit-gap",
                        f"audit entries {expected_seq}..{seq - 1} are missing (deleted?)",
                        seq=seq,
                    )
                )
            if prev_hash != prev:
                problems.append(
                    Problem(
                        "audit-chain",
                        f"audit entry {seq}: prev_hash does not match the entry before it",
                        seq=seq,
                    )
                )
            try:
                actual = audit_hash(seq, ts, event, name, sha, detail, prev_hash)
            except TypeError:  # a value JSON cannot hold (a BLOB): not written by the store
                actual = None
            if actual != digest:
                problems.append(
                    Problem(
                        "audit-hash",
                        f"audit entry {seq} ({event} {name}): "
                        "content does not match its hash (edited?)",
                        seq=seq,
                    )
                )
            prev, expected_seq = digest, seq + 1
            if event != "import" and event != "status":
                continue
            info = detail_object(detail)
            if info is None:
                problems.append(
                    Problem(
                        "audit-detail", f"audit entry {seq}: detail is not a JSON object", seq=seq
                    )
                )
                continue
            if event == "import":
                state[(name, sha)] = [
                    info.get("id"),
                    info.get("status"),
                    info.get("provenance"),
                    seq,
                    info.get("reason"),
                ]
            elif (name, sha) in state:
                state[(name, sha)][1] = info.get("to")
                state[(name, sha)][4] = info.get("reason")
            else:
                problems.append(
                    Problem(
                        "audit-orphan",
                        f"audit entry {seq}: status change for "
                        f"{name} {sha} which was never imported",
                        seq=seq,
                    )
                )
    return problems, count, state


def check_versions(
    store: Store, conn: sqlite3.Connection, state: dict[tuple[str, str], list]
) -> tuple[list[Problem], int]:
    """Each version row must point at a stored blob and be exactly what the audit log recorded."""
    problems: list[Problem] = []
    for name, sha in conn.execute(
        "SELECT v.name, v.sha256 FROM versions v LEFT JOIN blobs b "
        "ON b.sha256 = v.sha256 WHERE b.sha256 IS NULL ORDER BY v.id"
    ):
        problems.append(
            Problem("blob-missing", f"version {name} {sha[:12]}: its blob is missing", name, sha)
        )
    remaining = dict(state)
    count = 0
    imports = _logged_rows(conn)
    for row in conn.execute(
        "SELECT id, name, sha256, status, provenance, origin, final_url, reason, imported_at, "
        "findings, digest, skill_sha256, source FROM versions ORDER BY id"
    ):
        vid, name, sha, status, provenance = row[:5]
        count += 1
        if (name, sha) in state:  # a row the log does not know is reported as unrecorded
            problems += _row_problems(row, imports.get((name, sha), {}))
        recorded = remaining.pop((name, sha), None)
        if recorded is None:
            problems.append(
                Problem(
                    "version-unrecorded",
                    f"version {name} {sha[:12]}: not in the "
                    "audit log (inserted or re-pointed by hand?)",
                    name,
                    sha,
                )
            )
        elif recorded[0] != vid or recorded[1] != status or recorded[2] != provenance:
            for key, actual, logged in (
                ("id", vid, recorded[0]),
                ("status", status, recorded[1]),
                ("provenance", provenance, recorded[2]),
            ):
                if actual != logged:
                    problems.append(
                        Problem(
                            "version-mismatch",
                            f"version {name} {sha[:12]}: "
                            f"{key} is {actual!r} but the audit log says "
                            f"{logged!r}",
                            name,
                            sha,
                        )
                    )
        # The reason is shown as why a version may not be used: the import and every status
        # change log it, so text edited into the row is found like any other column.
        if recorded is not None and recorded[4] is not None and row[7] != recorded[4]:
            problems.append(
                Problem(
                    "version-mismatch",
                    f"version {name} {sha[:12]}: reason is {row[7]!r} but the audit log says "
                    f"{recorded[4]!r}",
                    name,
                    sha,
                )
            )
    for (name, sha), recorded in remaining.items():
        problems.append(
            Problem(
                "version-missing",
                f"version {name} {sha[:12]}: recorded in audit "
                f"entry {recorded[3]} but missing from the store",
                name,
                sha,
                recorded[3],
            )
        )
    return problems, count


_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|\+00:00)")


def _logged_rows(conn: sqlite3.Connection) -> dict[tuple[str, str], dict]:
    """(name, sha256) -> what each version's import entry recorded of its row (origin, final
    URL, and ``row``: the digest of its findings, digests and source)."""
    out: dict[tuple[str, str], dict] = {}
    for event, name, sha, detail in conn.execute(
        "SELECT event, name, sha256, detail FROM audit WHERE event = 'import' ORDER BY seq"
    ):
        info = _detail_object(detail)
        if not isinstance(info, dict):
            continue
        if event == "import":
            keys = ("origin", "final_url", "row")
            out[(name, sha)] = {k: info[k] for k in keys if k in info}
    return out


def _row_problems(row: tuple, logged: dict) -> list[Problem]:
    """A version row edited by hand: a column of the wrong type or shape (a command would read
    it as text, or its findings as unreadable), or a value the import's audit entry (and the
    status changes since) did not record."""
    from chimera_cards._store.versions import row_digest

    name, sha = row[1], row[2]
    label = f"version {name!s} {str(sha)[:12]}"
    out: list[Problem] = []
    columns = ("name", "sha256", "status", "provenance", "origin", "final_url", "reason")
    for column, value in zip(columns, row[1:8], strict=True):
        if not (type(value) is str or (column == "final_url" and value is None)):
            out.append(
                Problem("version-malformed", f"{label}: {column} is not text", str(name), str(sha))
            )
    if not (isinstance(row[8], str) and _TIME.fullmatch(row[8])):
        out.append(
            Problem(
                "version-malformed", f"{label}: imported_at is not a UTC time",
                str(name), str(sha),
            )
        )  # fmt: skip
    findings_text, source_text = row[9], row[12]
    if not _is_json(findings_text, list) or _shape_of_findings(findings_text):
        out.append(
            Problem(
                "version-malformed", f"{label}: its findings are not a list of findings",
                str(name), str(sha),
            )
        )  # fmt: skip
    if source_text not in (None, "") and not _is_json(source_text, dict):
        out.append(
            Problem(
                "version-malformed", f"{label}: its source is not a JSON object",
                str(name), str(sha),
            )
        )  # fmt: skip
    for key, actual in (("origin", row[5]), ("final_url", row[6])):
        if key in logged and logged[key] != actual:
            out.append(
                Problem(
                    "version-mismatch",
                    f"{label}: {key} is {actual!r} but the audit log says {logged[key]!r}",
                    str(name),
                    str(sha),
                )
            )
    if "row" in logged and logged["row"] != row_digest(row[9], row[10], row[11], row[12]):
        out.append(
            Problem(
                "version-mismatch",
                f"{label}: its findings, digests or source differ from what its "
                "import recorded in the audit log (edited by hand?)",
                str(name),
                str(sha),
            )
        )
    return out


def _is_json(text: object, kind: type) -> bool:
    if not isinstance(text, str):
        return False
    try:
        return isinstance(json.loads(text), kind)
    except ValueError:
        return False


def _shape_of_findings(text: str) -> bool:
    """Whether the stored findings hold an item that is no finding (True: malformed)."""
    from chimera_cards._store.rows import _is_finding

    return not all(_is_finding(item) for item in json.loads(text))


def check_bundles(store: Store, conn: sqlite3.Connection) -> list[Problem]:
    """Every version's bundle: its file rows must hash to its digest, the stored manifest must be
    those rows' manifest, and every file's blob must be there with its recorded size (the blobs'
    own bytes are re-hashed by ``check_blobs``), so any file of any bundle is checked."""
    problems: list[Problem] = []
    files: dict[str, list[BundleFile]] = {}
    sizes = dict(conn.execute("SELECT sha256, size FROM blobs"))
    for digest, path, executable, size, sha in conn.execute(
        "SELECT digest, path, executable, size, sha256 FROM bundle_files"
    ):
        files.setdefault(digest, []).append(_file_row(path, executable, size, sha))
    for name, sha, digest in conn.execute(
        "SELECT name, sha256, digest FROM versions ORDER BY id"
    ).fetchall():
        label = f"version {name} {sha[:12]}"
        rows = files.get(digest or "")
        if not rows:
            problems.append(
                Problem("bundle-missing", f"{label}: its file list is missing", name, sha)
            )
            continue
        manifest = manifest_bytes(rows)
        if hashlib.sha256(manifest).hexdigest() != digest:
            problems.append(
                Problem(
                    "bundle-manifest",
                    f"{label}: its file list does not hash to its bundle digest {digest[:12]}",
                    name,
                    sha,
                )
            )
        stored = store.get_blob(digest)
        if stored is not None and stored != manifest:
            problems.append(
                Problem(
                    "bundle-manifest", f"{label}: stored manifest differs from its files", name, sha
                )
            )
        for f in rows:
            if f.sha256 not in sizes:
                problems.append(
                    Problem("blob-missing", f"{label}: bytes of {f.path} are missing", name, sha)
                )
            elif sizes[f.sha256] != f.size:
                problems.append(
                    Problem(
                        "bundle-size",
                        f"{label}: {f.path} is recorded as {f.size} bytes, stored "
                        f"{sizes[f.sha256]}",
                        name,
                        sha,
                    )
                )
    return problems


def check_trust(store: Store, conn: sqlite3.Connection) -> list[Problem]:
    """Replay the trust changes in the audit log: the trust list and the threshold stored now
    must be exactly what the log says was set (so a key inserted by hand is reported).

    Returns:
        One Problem per key or setting that differs from the log.
    """
    problems: list[Problem] = []
    keys: dict[str, dict] = {}
    threshold: str | None = None
    expires: str | None = None
    marks = ", ".join("?" * len(TRUST_EVENTS))
    for event, detail in conn.execute(
        f"SELECT event, detail FROM audit WHERE event IN ({marks}) ORDER BY seq", TRUST_EVENTS
    ):
        info = _detail_object(detail) or {}
        name = info.get("name")
        if event == "trust-add" and isinstance(name, str):
            keys[name] = info
        elif event == "trust-remove" and isinstance(name, str):
            keys.pop(name, None)
        elif event == "trust-threshold":
            threshold = str(info.get("threshold"))
        elif event == "trust-expires":
            value = info.get("expires")
            expires = value if isinstance(value, str) and value else None
    for name, keyid, pubkey in store.trust_rows():
        logged = keys.pop(name, None)
        if logged is None:
            problems.append(
                Problem(
                    "trust-unrecorded",
                    f"trusted key {name!r} ({keyid}) is not in the audit log (added by hand?)",
                )
            )
        elif logged.get("keyid") != keyid or logged.get("public_key", pubkey) != pubkey:
            problems.append(
                Problem(
                    "trust-mismatch",
                    f"trusted key {name!r}: the stored key is not the one the audit log recorded",
                )
            )
    for name, logged in keys.items():
        problems.append(
            Problem(
                "trust-missing",
                f"trusted key {name!r} ({logged.get('keyid')}) is in the audit log but missing "
                "from the trust list",
            )
        )
    stored = store.get_setting(THRESHOLD_SETTING)
    if stored != threshold:
        problems.append(
            Problem(
                "threshold-mismatch",
                f"the threshold setting is {stored!r} but the audit log says {threshold!r}",
            )
        )
    stored = store.get_setting(EXPIRES_SETTING) or None
    if stored != expires:
        problems.append(
            Problem(
                "expires-mismatch",
                f"the default expiry setting is {stored!r} but the audit log says {expires!r}",
            )
        )
    return problems


def check_anchor(
    store: Store, conn: sqlite3.Connection, expect_head: str | None = None
) -> list[Problem]:
    """The log's end against the heads kept outside it: the head file beside the store
    (``audit-truncated``, ``audit-head-file``) and ``expect_head`` given by the caller
    (``audit-head-unknown`` when it is not an entry of the chain).

    Returns:
        One Problem per head the log does not hold.
    """
    problems = [Problem(kind, message) for kind, message in store.anchor_problems()]
    if expect_head is not None:
        problem = expected_head_problem(conn, expect_head)
        if problem:
            problems.append(Problem("audit-head-unknown", problem))
    return problems


def resolve_hook(spec: str | Callable) -> Callable:
    """A hook given as a callable, or as ``"module:function"`` loaded when first needed (so the
    store does not import the review code that registers itself here)."""
    if callable(spec):
        return spec
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def verify_store(
    store: Store,
    *,
    record: bool = True,
    extra_checks: Iterable[str | Callable] | None = None,
    expect_head: str | None = None,
) -> VerifyReport:
    """Check the schema, blobs, versions and the audit chain and its anchors (plus
    ``EXTRA_VERIFY_CHECKS``, or ``extra_checks`` if given) in one consistent snapshot; then, if
    ``record``, append a ``verify`` audit entry with the outcome. Returns the report; never
    raises for tampering.

    Args:
        store: the open store.
        record: append the outcome to the audit log.
        extra_checks: instead of ``EXTRA_VERIFY_CHECKS``.
        expect_head: the hash of an audit entry kept elsewhere (a CI log, a commit): it must
            be an entry of this log, else entries were cut off its end.
    Raises:
        UsageError: ``expect_head`` is not 64 hex digits.
    """
    if expect_head is not None and not is_hex(expect_head.strip(), 64):
        raise UsageError(f"--expect-head {expect_head!r}: give the 64 hex digits of an audit head")
    start = time.perf_counter()
    checks = EXTRA_VERIFY_CHECKS if extra_checks is None else tuple(extra_checks)
    from chimera_cards._store.schemacheck import check_schema  # verify only: not for every reader

    with store.snapshot() as conn:
        # The schema first: every other check reads the rows through it.
        problems = [Problem(kind, message) for kind, message in check_schema(conn)]
        more, blob_count, total = check_blobs(store, conn)
        problems += more
        chain_problems, entries, state = check_audit_chain(store, conn)
        version_problems, version_count = check_versions(store, conn, state)
        problems += chain_problems + version_problems + check_trust(store, conn)
        problems += check_bundles(store, conn)
        problems += check_anchor(store, conn, expect_head)
        for check in checks:
            fn = resolve_hook(check)
            try:
                problems.extend(fn(store, conn))
            except ChimeraError as exc:
                # A row the check cannot read (a trust row that is no key) is itself a finding:
                # reported, and the other checks still run.
                problems.append(Problem("verify-check-failed", f"{check}: {exc}"))
        head = store.audit_head()
    report = VerifyReport(
        ok=not problems,
        blobs=blob_count,
        bytes=total,
        versions=version_count,
        audit_entries=entries,
        problems=problems,
        head=head,
        seconds=time.perf_counter() - start,
    )
    if record:
        try:
            with store.transaction() as conn:
                store.append_audit(
                    conn,
                    "verify",
                    None,
                    None,
                    {
                        "ok": report.ok,
                        "problems": len(problems),
                        "blobs": blob_count,
                        "versions": version_count,
                        "audit_entries": entries,
                        "kinds": sorted({p.kind for p in problems}),
                    },
                )
            report.recorded = True
        except (sqlite3.OperationalError, StoreWriteError):
            # A read-only store or a full disk can still be verified; the report says it was
            # not recorded.
            pass
    return report
