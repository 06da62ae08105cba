"""The hash-chained audit log: each entry holds the hash of the one before it."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import asdict, dataclass

from chimera_cards.store.connection import StoreConnection, _loads_or_raw, utc_now

__all__ = ["GENESIS_HASH", "AuditEntry", "AuditMixin", "audit_hash", "canonical_json"]

_encode_str = json.encoder.encode_basestring
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
    # json.dumps(ensure_ascii=False) encodes a str with exactly this (C) function.
    if type(value) is str:
        return _encode_str(value)
    return "null" if value is None else json.dumps(value)


def audit_hash(
    seq: int, ts: str, event: str, name: str | None, sha256: str | None, detail: str, prev_hash: str
) -> str:
    """SHA-256 of the canonical JSON (``canonical_json``) of an entry, ``detail`` as its stored
    JSON text. Spelled out key by key, in sorted order, because verify hashes every entry and
    this is several times faster than building and sorting a dict; a test pins the equality."""
    text = _CHAIN_TEXT % (
        _json_value(detail),
        _json_value(event),
        _json_value(name),
        _json_value(prev_hash),
        seq if type(seq) is int else json.dumps(seq),
        _json_value(sha256),
        _json_value(ts),
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
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
    """The audit chain's rows."""

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
        return AuditEntry(seq, ts, event, name, sha256, dict(detail), prev, digest)

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
