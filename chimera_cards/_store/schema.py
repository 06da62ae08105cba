"""The store's schema: the DDL of each table family and the ordered ``MIGRATIONS`` list.

``PRAGMA user_version`` is how many migrations have been applied; a store written by a newer
chimera-cards (more migrations than this one knows) is refused rather than guessed at.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from chimera_cards._bundles.folderscan import SKILL_FILE
from chimera_cards._bundles.manifest import BundleFile, manifest_bytes

# A migration is SQL text (any number of statements) or a callable taking the connection; it runs
# inside the migrating transaction. Append only: never edit or reorder an entry once released.
Migration = str | Callable[[sqlite3.Connection], None]

_SCHEMA_1 = """
CREATE TABLE blobs (
    sha256 TEXT PRIMARY KEY,
    data   BLOB NOT NULL,
    size   INTEGER NOT NULL
);
CREATE TABLE versions (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    sha256      TEXT NOT NULL REFERENCES blobs(sha256),
    origin      TEXT NOT NULL,
    final_url   TEXT,
    imported_at TEXT NOT NULL,
    provenance  TEXT NOT NULL CHECK (provenance IN ('clean', 'tainted')),
    status      TEXT NOT NULL CHECK (status IN ('active', 'pending', 'rejected', 'retired')),
    reason      TEXT NOT NULL DEFAULT '',
    findings    TEXT NOT NULL DEFAULT '[]',
    UNIQUE (name, sha256)
);
CREATE UNIQUE INDEX versions_one_active ON versions(name) WHERE status = 'active';
CREATE INDEX versions_status ON versions(status);
CREATE TABLE audit (
    seq       INTEGER PRIMARY KEY,
    ts        TEXT NOT NULL,
    event     TEXT NOT NULL,
    name      TEXT,
    sha256    TEXT,
    detail    TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);
-- The chain makes tampering detectable; these triggers stop accidents through the normal API.
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
"""

_SCHEMA_2_REVIEW = """
-- Review: the trust list, signed review statements, review settings, and the FTS5 index
-- that retrieve.match ranks with. Statements are kept as signed; trust is decided on every read.
CREATE TABLE trust (
    name     TEXT PRIMARY KEY,
    keyid    TEXT NOT NULL UNIQUE,
    pubkey   TEXT NOT NULL,
    added_at TEXT NOT NULL
);
CREATE TABLE statements (
    id        INTEGER PRIMARY KEY,
    name      TEXT NOT NULL,
    sha256    TEXT NOT NULL,
    decision  TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
    keyid     TEXT NOT NULL,
    signed_at TEXT NOT NULL,
    envelope  TEXT NOT NULL,
    UNIQUE (sha256, keyid, decision)
);
CREATE INDEX statements_sha256 ON statements(sha256);
CREATE TABLE review_settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE VIRTUAL TABLE card_fts USING fts5(name, description, triggers, tokenize = 'unicode61');
CREATE TABLE index_queue (version_id INTEGER PRIMARY KEY);
CREATE TRIGGER versions_index_queue AFTER INSERT ON versions
BEGIN INSERT OR IGNORE INTO index_queue (version_id) VALUES (new.id); END;
CREATE TRIGGER versions_index_drop AFTER DELETE ON versions
BEGIN
    DELETE FROM card_fts WHERE rowid = old.id;
    DELETE FROM index_queue WHERE version_id = old.id;
END;
INSERT INTO index_queue (version_id) SELECT id FROM versions;
"""

MIGRATIONS: list[Migration] = [_SCHEMA_1]
# Review: trust, statements, review_settings, FTS5 index.
MIGRATIONS.append(_SCHEMA_2_REVIEW)
# Import looks a card's bytes up by hash alone, to skip re-parsing what is already stored.
MIGRATIONS.append("CREATE INDEX IF NOT EXISTS versions_sha256 ON versions(sha256);")

_SCHEMA_4_BUNDLES = """
-- Skills are folders: a version is a bundle of files. Each file's bytes are a blob; the bundle's
-- manifest (bundle.manifest_bytes) is a blob too, keyed by the bundle digest, and bundle_files
-- lists it as rows. A version's sha256 is the hash its review statements sign: the bundle digest
-- for every version stored from now on; a version stored before keeps its SKILL.md hash (so its
-- approvals keep verifying) and gets its one-file bundle recorded beside it.
ALTER TABLE versions ADD COLUMN digest TEXT;
ALTER TABLE versions ADD COLUMN skill_sha256 TEXT;
ALTER TABLE versions ADD COLUMN source TEXT NOT NULL DEFAULT '{}';
CREATE TABLE bundle_files (
    digest     TEXT NOT NULL,
    path       TEXT NOT NULL,
    executable INTEGER NOT NULL CHECK (executable IN (0, 1)),
    size       INTEGER NOT NULL,
    sha256     TEXT NOT NULL REFERENCES blobs(sha256),
    PRIMARY KEY (digest, path)
) WITHOUT ROWID;
CREATE INDEX versions_digest ON versions(digest);
"""


def _migrate_bundles(conn: sqlite3.Connection) -> None:
    """Migration 4: the bundle tables, and each existing version recorded as a one-file bundle."""
    import hashlib  # only when migrating: every opening of a store loads this module

    for statement in _split_sql(_SCHEMA_4_BUNDLES):
        conn.execute(statement)
    rows = conn.execute(
        "SELECT v.id, v.sha256, b.size FROM versions v JOIN blobs b ON b.sha256 = v.sha256"
    ).fetchall()
    for vid, sha, size in rows:
        manifest = manifest_bytes([BundleFile(SKILL_FILE, False, size, sha)])
        digest = hashlib.sha256(manifest).hexdigest()
        conn.execute(
            "INSERT OR IGNORE INTO blobs (sha256, data, size) VALUES (?, ?, ?)",
            (digest, sqlite3.Binary(manifest), len(manifest)),
        )
        conn.execute(
            "INSERT OR IGNORE INTO bundle_files (digest, path, executable, size, sha256) "
            "VALUES (?, ?, 0, ?, ?)",
            (digest, SKILL_FILE, size, sha),
        )
        conn.execute(
            "UPDATE versions SET digest = ?, skill_sha256 = sha256 WHERE id = ?", (digest, vid)
        )


MIGRATIONS.append(_migrate_bundles)

# Verdicts on review statements, remembered so that check and install need not redo the Ed25519
# arithmetic on every run (trust.evaluate_remembered). A cache: keyed by the SHA-256 of every
# input of the verdict, so it is never invalidated, only pruned; verify re-derives its rows.
MIGRATIONS.append(
    "CREATE TABLE verdict_memo (key TEXT PRIMARY KEY, verdict TEXT NOT NULL) WITHOUT ROWID;"
)
# Other scanners' verdicts on a version (SARIF plug-ins): one row per (version, scanner), with
# the tool that ran, whether it ran at all (a failed run holds the version) and its findings as
# canonical JSON, each with the id ``approve --accept`` names.
MIGRATIONS.append(
    """CREATE TABLE scanner_results (
    version_id   INTEGER NOT NULL REFERENCES versions(id),
    scanner      TEXT NOT NULL,
    tool         TEXT,
    tool_version TEXT,
    status       TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    reason       TEXT NOT NULL DEFAULT '',
    findings     TEXT NOT NULL,
    scanned_at   TEXT NOT NULL,
    PRIMARY KEY (version_id, scanner)
) WITHOUT ROWID;"""
)
# Supersession: a name's statements are read together (its signed history), and the highest rank
# a name reached while active is kept, so a removed key, an expiry or a retirement never lowers
# the floor an older version must climb over.
MIGRATIONS.append(
    """
CREATE INDEX statements_name ON statements(name);
CREATE TABLE name_floor (
    name     TEXT PRIMARY KEY,
    sequence INTEGER NOT NULL,
    micros   INTEGER NOT NULL,
    sha256   TEXT NOT NULL
) WITHOUT ROWID;
"""
)
_TEXT_FIELDS = ("name", "sha256", "origin", "imported_at", "provenance", "status", "reason")


def _split_sql(script: str) -> list[str]:
    """Statements of a script, split where SQLite says a statement is complete (so triggers with
    ``;`` inside BEGIN..END stay whole). executescript would COMMIT the migrating transaction."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip() and not buffer.strip().startswith("--"):
        statements.append(buffer.strip())
    return statements
