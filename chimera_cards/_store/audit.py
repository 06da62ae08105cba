"""The hash-chained audit log: each entry holds the hash of the one before it."""

from __future__ import annotations

import json
import sqlite3

from chimera_cards._store.anchor import (
    Anchor,
    anchor_problem,
    head_path,
    read_anchor,
    write_anchor,
)
from chimera_cards._store.connection import StoreConnection, _loads_or_raw, utc_now
from chimera_cards._util.integrity import sha256_of
from chimera_cards._util.records import asdict, record

_encode_str = json.encoder.encode_basestring
_sha256 = sha256_of
GENESIS_HASH = "0" * 64


# What json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False) builds on every
# call; built once, as the store encodes a few values per imported card.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value) -> str:
    """Sorted keys, no whitespace, UTF-8 text: the one form that is hashed."""
    return _CANONICAL.encode(value)


# The one spelling of an audit entry's hashed text: canonical_json of its fields, keys sorted.
_CHAIN_TEXT = '{"detail":%s,"event":%s,"name":%s,"prev_hash":%s,"seq":%s,"sha256":%s,"ts":%s}'


def _json_value(value) -> str:
    # json.dumps(ensure_ascii=False) encodes a str with exactly this (C) function; anything else
    # (a str subclass, a number) in the canonical form, so both paths of audit_hash agree.
    if type(value) is str:
        return _encode_str(value)
    return canonical_json(value)


def audit_hash(
    seq: int, ts: str, event: str, name: str | None, sha256: str | None, detail: str, prev_hash: str
) -> str:
    """SHA-256 of the canonical JSON (``canonical_json``) of an entry, ``detail`` as its stored
    JSON text: the one definition, used to write the chain and to verify it.

    Spelled out key by key, in sorted order (several times faster than building and sorting a
    dict; a test pins the equality with ``canonical_json``). The row shape the store writes
    (text fields, name and sha256 text or NULL, an integer seq) is encoded without a call per
    field, since ``verify`` hashes every entry; any other value goes through ``json``.

    Raises:
        TypeError: a value JSON cannot hold (bytes): not something the store writes.
    """
    if (
        type(seq) is int
        and type(ts) is str
        and type(event) is str
        and type(detail) is str
        and type(prev_hash) is str
        and (name is None or type(name) is str)
        and (sha256 is None or type(sha256) is str)
    ):
        text = _CHAIN_TEXT % (
            _encode_str(detail),
            _encode_str(event),
            "null" if name is None else _encode_str(name),
            _encode_str(prev_hash),
            seq,
            "null" if sha256 is None else _encode_str(sha256),
            _encode_str(ts),
        )
    else:
        text = _CHAIN_TEXT % (
            _json_value(detail),
            _json_value(event),
            _json_value(name),
            _json_value(prev_hash),
            seq if type(seq) is int else canonical_json(seq),
            _json_value(sha256),
            _json_value(ts),
        )
    return _sha256(text.encode()).hexdigest()


@record
class AuditEntry:
    """One entry of the audit log, chained to the one before by its hash."""

    seq: int
    ts: str
    event: str
    name: str | None
    sha256: str | None
    detail: dict
    prev_hash: str
    hash: str

    def to_dict(self) -> dict:
        return asdict(self)


class AuditMixin(StoreConnection):
    """The audit chain's rows, and its head kept in a file beside the store (``anchor``)."""

    # Set by append_audit, cleared when the head file has been brought up to date after commit.
    _appended = False
    # Set by reset_anchor: the next commit writes the head file even over a mismatch.
    _reanchor = False

    def append_audit(
        self,
        conn: sqlite3.Connection,
        event: str,
        name: str | None,
        sha256: str | None,
        detail: dict,
    ) -> AuditEntry:
        """Append one entry chained to the current last one (call inside transaction())."""
        last = conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
        seq, prev = (last[0] + 1, last[1]) if last else (1, GENESIS_HASH)
        ts = utc_now()
        detail_text = canonical_json(detail)
        digest = audit_hash(seq, ts, event, name, sha256, detail_text, prev)
        conn.execute(
            "INSERT INTO audit (seq, ts, event, name, sha256, detail, prev_hash, hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (seq, ts, event, name, sha256, detail_text, prev, digest),
        )
        self._appended = True
        return AuditEntry(seq, ts, event, name, sha256, dict(detail), prev, digest)

    # -- the anchored head ----------------------------------------------------------------------

    @property
    def head_file(self):
        """The head file beside this store (``cards.db.head``)."""
        return head_path(self.path)

    def audit_anchor(self) -> Anchor:
        """The newest audit entry as (seq, hash); seq 0 and the genesis hash for an empty log."""
        row = self._conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
        return Anchor(row[0], row[1]) if row else Anchor(0, GENESIS_HASH)

    def anchor_problems(self) -> list[tuple[str, str]]:
        """What the head file says against the log: (kind, message) for a head the log no
        longer holds (``audit-truncated``) or a file that is not a head file
        (``audit-head-file``); empty when they agree or there is no file yet."""
        recorded = read_anchor(self.head_file)
        if recorded is None:
            return []
        if isinstance(recorded, str):
            return [("audit-head-file", recorded)]
        problem = anchor_problem(self._conn, recorded)
        return [("audit-truncated", problem)] if problem else []

    def reset_anchor(self) -> tuple[Anchor | str | None, Anchor]:
        """Re-anchor the head file to the log as it is (after a rollback was looked into), and
        record in the log that this was done and what the file said before.

        Returns:
            (what the head file held before, the new head).
        """
        previous = read_anchor(self.head_file)
        detail = previous.to_dict() if isinstance(previous, Anchor) else {"file": previous}
        with self.transaction() as conn:
            self._reanchor = True
            self.append_audit(conn, "head-reset", None, None, {"previous": detail})
        return previous, self.audit_anchor()

    def _after_open(self) -> None:
        super()._after_open()
        for _, message in self.anchor_problems():
            self.warnings.append(f"{message} (see `chimera-cards verify`)")

    def _after_commit(self) -> None:
        super()._after_commit()
        if not self._appended:
            return
        self._appended = False
        force, self._reanchor = self._reanchor, False
        # After the commit, outside the write lock: two processes may write the file in either
        # order, which can leave it one commit behind (a lag, never a false alarm).
        now = self.audit_anchor()
        if not force:
            recorded = read_anchor(self.head_file)
            if isinstance(recorded, str):
                return  # a broken witness is reported, not silently replaced
            if recorded is not None:
                if anchor_problem(self._conn, recorded) is not None:
                    return  # the log went back: keep the evidence until someone resets it
                if recorded.seq >= now.seq:
                    return
        write_anchor(self.head_file, now)

    def audit_entries(self) -> list[AuditEntry]:
        """The whole audit log, oldest first."""
        return [
            AuditEntry(seq, ts, event, name, sha, _loads_or_raw(detail), prev, digest)
            for seq, ts, event, name, sha, detail, prev, digest in self._conn.execute(
                "SELECT seq, ts, event, name, sha256, detail, prev_hash, hash "
                "FROM audit ORDER BY seq"
            )
        ]

    def audit_head(self) -> str:
        """The hash of the last audit entry (the genesis hash for an empty log)."""
        row = self._conn.execute("SELECT hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
        return row[0] if row else GENESIS_HASH
