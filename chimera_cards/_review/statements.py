"""Statements files: signed decisions written beside a card and read back on import."""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chimera_cards._bundles.folderscan import APPROVALS_FILENAME
from chimera_cards._review.decisions import Change, reconcile, store_statement, verdict_for
from chimera_cards._review.supersession import hold_if_older, raise_floor, version_rank
from chimera_cards._store.facade import Store
from chimera_cards._store.rows import Version
from chimera_cards._store.verify import Problem
from chimera_cards._trust.keys import (
    EnvelopeError,
    parse_envelope,
)
from chimera_cards._trust.policy import (
    evaluate,
    get_threshold,
    peek_statement,
    trusted_keys,
)
from chimera_cards._util.atomic import write_atomic
from chimera_cards._util.urls import is_url
from chimera_cards.errors import (
    ApprovalsFileError,
    TamperedBlobError,
    UnsafeTargetError,
)

MAX_APPROVALS_FILE_BYTES = 1024 * 1024


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
    if new and now is not None and now.status == "active":
        held = hold_older_import(store, conn, now)
        if held is not None:
            return held
        verdict = verdict_for(store, name, sha)
        raise_floor(store, conn, name, sha, version_rank(verdict, verdict.threshold))
    return now


def hold_older_import(store: Store, conn: sqlite3.Connection, version: Version) -> Version | None:
    """A clean import just made ``version`` active: hold it pending as a downgrade (and give
    the active place back) when its name's signed history says it is older.

    Returns:
        The version as it is now when it was held; None when it stays active.
    """
    if not store.statements_of_name(version.name) and store.name_floor(version.name) is None:
        return None  # nothing was ever signed about the name: no history to be older than
    trusted, threshold = trusted_keys(store), get_threshold(store)
    return hold_if_older(store, conn, version, trusted, threshold)


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
