"""The card store: one SQLite file holding every version of every card and a hash-chained audit log.

Cards are kept as their exact bytes, content-addressed by SHA-256 (``blobs``); each (name, bytes)
pair is a row of ``versions`` with where it came from, its provenance and status and its lint
findings; at most one version per name is ``active`` (a partial unique index enforces it). Every
change — an import, a status change, a verification — appends an ``audit`` entry that holds the
hash of the entry before it, so editing or deleting an entry breaks the chain. ``verify_store``
re-hashes every blob, walks the chain, and replays it to check that each version row is exactly
what the log says was recorded (so a status flipped by hand in the SQLite file is caught).

Schema changes are an ordered ``MIGRATIONS`` list; ``PRAGMA user_version`` is how many have been
applied, and a store written by a newer chimera-cards (more migrations than this one knows) is
refused rather than guessed at. Every change runs inside ``Store.transaction()`` (``BEGIN
IMMEDIATE``), so concurrent writers queue on the busy timeout instead of failing, and a process
killed mid-change leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import json
import math
import os
import sqlite3
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chimera_cards.atomic import WriteError
from chimera_cards.bundle import (
    SKILL_FILE,
    Bundle,
    BundleFile,
    bundle_digest,
    bundle_from_files,
    manifest_bytes,
)
from chimera_cards.errors import (
    LinkEscapeError,
    StoreError,
    StoreWriteError,
    TamperedBlobError,
    UnapprovedExportError,
    UnknownCardError,
    UnknownVersionError,
    UnsafeTargetError,
    UnstorableNameError,
    UsageError,
)
from chimera_cards.integrity import is_hex

_encode_str = json.encoder.encode_basestring

STATUSES = ("active", "pending", "rejected", "retired")
# The status a previously active version keeps as history when another one becomes active.
SUPERSEDED = "retired"
PROVENANCES = ("clean", "tainted")
GENESIS_HASH = "0" * 64
# 'CHMC': marks the SQLite file as ours, so we never migrate someone else's database.
APPLICATION_ID = 0x43484D43
SQLITE_HEADER = b"SQLite format 3\x00"
DEFAULT_TIMEOUT = 30.0

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
# More rows than this and the memo starts over: refilling costs one verification per version.
MAX_REMEMBERED_VERDICTS = 100_000

# Extra checks run by verify_store after the built-in ones, as "module:function" so a later
# module (e.g. signed review statements) can add one without this module importing it. Each is
# called as fn(store, conn) and returns an iterable of Problem.
# Review: stored signatures must match the bytes they are about.
# Trust: every verdict the store remembers must be what its statements verify to now.
EXTRA_VERIFY_CHECKS: tuple[str, ...] = (
    "chimera_cards.review:verify_check",
    "chimera_cards.trust:check_remembered_verdicts",
)


# Run by export_card after it writes SKILL.md, as "module:function" called
# fn(store, name, sha256, card_dir) -> Path | None (a file written beside the card, e.g. approvals).
# Review: the card's signed statements go beside it as approvals.jsonl.
EXPORT_HOOKS: tuple[str, ...] = ("chimera_cards.review:write_statements",)

_BAD_NAME_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs")


def default_store_path() -> Path:
    """``$CHIMERA_CARDS_HOME/cards.db``, else ``$XDG_DATA_HOME/chimera-cards/cards.db``, else
    ``~/.local/share/chimera-cards/cards.db``."""
    home = os.environ.get("CHIMERA_CARDS_HOME")
    if home:
        return Path(home) / "cards.db"
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "chimera-cards" / "cards.db"


def check_storable_name(name: str | None) -> str:
    """Refuse names that cannot safely be a directory name or a lockfile field."""
    if not name:
        raise UnstorableNameError("card has no string 'name' in its frontmatter; cannot store it")
    if (
        name in (".", "..")
        or len(name) > 200
        or "/" in name
        or "\\" in name
        # Printable ASCII other than the space is in none of those categories: look closer only
        # at a name with anything else in it.
        or (
            not (name.isascii() and name.isprintable() and " " not in name)
            and any(unicodedata.category(ch) in _BAD_NAME_CATEGORIES for ch in name)
        )
    ):
        raise UnstorableNameError(
            f"card name {name!r} cannot be stored (whitespace, path separators, "
            "control or invisible characters)"
        )
    return name


def utc_now() -> str:
    """Now in UTC as ISO 8601 with microseconds and a ``Z``: every timestamp the store writes."""
    from datetime import UTC, datetime  # only when writing: reading a store never needs it

    # isoformat is several times faster than strftime("%Y-%m-%dT%H:%M:%S.%fZ"), same text.
    return datetime.now(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


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
class Version:
    """One stored version of a card: its bytes, origin, status and findings."""

    id: int
    name: str
    sha256: str
    origin: str
    final_url: str | None
    imported_at: str
    provenance: str
    status: str
    reason: str
    findings: list[dict] = field(default_factory=list)
    digest: str = ""  # the bundle digest (see bundle.py); equals sha256 unless stored pre-bundles
    skill_sha256: str = ""  # SHA-256 of the SKILL.md bytes
    source: dict = field(default_factory=dict)  # how it was fetched: kind, ref, commit, path

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_row(cls, row: Sequence) -> Version:
        return cls(
            id=row[0],
            name=row[1],
            sha256=row[2],
            origin=row[3],
            final_url=row[4],
            imported_at=row[5],
            provenance=row[6],
            status=row[7],
            reason=row[8],
            findings=_findings(row[9]),
            digest=row[10] or row[2],
            skill_sha256=row[11] or row[2],
            source=_loads_or_raw(row[12]) if row[12] else {},
        )


_ID_CHUNK = 500


def _id_chunks(values: Iterable[str]) -> Iterator[tuple[list[str], str]]:
    """The distinct ``values``, sorted, ``_ID_CHUNK`` at a time, each with its ``?`` marks:
    SQLite bounds how many parameters one statement may bind."""
    wanted = sorted(set(values))
    for start in range(0, len(wanted), _ID_CHUNK):
        chunk = wanted[start : start + _ID_CHUNK]
        yield chunk, ",".join("?" * len(chunk))


_MAX_PAIRED_PHRASES = 6  # 15 pairs; longer queries are ranked in full
_BM25_K1 = 1.2  # SQLite FTS5's bm25() constant k1
_TEXT_FIELDS = ("name", "sha256", "origin", "imported_at", "provenance", "status", "reason")


def _tampered_file(label: str, path: str) -> TamperedBlobError:
    return TamperedBlobError(
        f"{label}: stored bytes of {path} are missing or do not match their hash; "
        "run `chimera-cards verify`"
    )


def _checked_version(row: Sequence) -> Version:
    """Version.from_row for a row that may have been written by hand: every text column must
    hold text (SQLite lets any column hold a BLOB or a number)."""
    version = Version.from_row(row)
    for name in _TEXT_FIELDS:
        if type(getattr(version, name)) is not str:
            raise ValueError(f"{name} is not text")
    if version.final_url is not None and type(version.final_url) is not str:
        raise ValueError("final_url is not text")
    return version


def _findings(text: str | None) -> list[dict]:
    # Unreadable findings count as an error finding: a version must never look clean by accident.
    try:
        value = json.loads(text or "[]")
    except ValueError:
        value = None
    if isinstance(value, list):
        return value
    return [
        {
            "rule": "unreadable-findings",
            "severity": "error",
            "message": "stored lint findings are not readable",
        }
    ]


_VERSION_COLUMNS = (
    "id, name, sha256, origin, final_url, imported_at, provenance, status, reason, findings, "
    "digest, skill_sha256, source"
)
# The same, with empty findings and source: parsing them is most of the cost of a row.
_VERSION_COLUMNS_BARE = (
    "id, name, sha256, origin, final_url, imported_at, provenance, status, reason, '[]', "
    "digest, skill_sha256, '{}'"
)


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


def _check_file(path: Path) -> None:
    """Refuse a non-empty file that is not SQLite before sqlite3 gets to touch it."""
    if path.is_dir():
        raise StoreError(f"{path}: is a directory, not a store file")
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"{path}: cannot read store ({exc.strerror})") from None
    if head and head != SQLITE_HEADER:
        raise StoreError(f"{path}: not a chimera-cards store (not an SQLite database)")


def _is_empty(path: Path) -> bool:
    """A 0-byte file with no write-ahead log beside it holding the store's first pages."""
    wal = Path(str(path) + "-wal")
    return path.stat().st_size == 0 and not (wal.exists() and wal.stat().st_size > 0)


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


class Store:
    """An open card store. Use as a context manager or call ``close()``."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        create: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        if self.path.exists():
            _check_file(self.path)
            if not create and _is_empty(self.path):
                # sqlite3 would take an empty file for an empty store (and verify would say ok).
                raise StoreError(f"{self.path}: empty file, not a chimera-cards store")
        elif not create:
            raise StoreError(f"{self.path}: no store here (import a card first, or pass --store)")
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"{self.path.parent}: cannot create ({exc.strerror})") from None
        try:
            self._conn = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open store ({exc})") from None
        try:
            self._busy_ms = int(timeout * 1000)
            self._conn.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
            # Typical cards are ~4 KB: with 16 KB pages most blobs fit in one page instead of an
            # overflow chain (only takes effect on a new, empty file); mmap makes verify's full
            # read of every blob cheaper.
            self._conn.execute("PRAGMA page_size = 16384")
            self._conn.execute(f"PRAGMA mmap_size = {256 * 1024 * 1024}")
            # Refuse a foreign or newer file before changing anything about it (even its journal).
            self._check_identity_now()
            self._set_wal()
            self._conn.execute("PRAGMA foreign_keys = ON")
            # WAL + NORMAL cannot corrupt or half-apply a transaction on a crash; it may lose the
            # last commits on power loss, which a re-import repeats.
            self._conn.execute("PRAGMA synchronous = NORMAL")
            # An insert that fires a trigger opens a statement journal: keep it (and sorts) in
            # memory rather than a temp file; and give a batch of cards enough page cache that
            # its pages are not spilled to the WAL before it commits (SQLite's default is 2 MB).
            self._conn.execute("PRAGMA temp_store = MEMORY")
            self._conn.execute("PRAGMA cache_size = -32768")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            text = str(exc)
            if "not a database" in text or "malformed" in text:
                raise StoreError(f"{self.path}: not a chimera-cards store ({text})") from None
            raise StoreError(f"{self.path}: cannot open store ({text})") from None
        except BaseException:
            self._conn.close()
            raise

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection; the store is a context manager that does this on exit."""
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _set_wal(self) -> None:
        # Switching a fresh file to WAL needs a moment of exclusive access, and the busy handler is
        # not always consulted for it; a few short retries cover processes opening at once.
        for attempt in range(50):
            try:
                self._conn.execute("PRAGMA journal_mode = WAL").fetchone()
                return
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or attempt == 49:
                    raise
                time.sleep(0.02 * (1 + attempt % 5))

    @property
    def schema_version(self) -> int:
        """The schema version of the open file (``PRAGMA user_version``)."""
        return self._conn.execute("PRAGMA user_version").fetchone()[0]

    def _check_identity(self, version: int) -> None:
        if version > len(MIGRATIONS):
            raise StoreError(
                f"{self.path}: store schema version {version} is newer than this chimera-cards "
                f"understands (up to {len(MIGRATIONS)}); upgrade chimera-cards"
            )
        app_id = self._conn.execute("PRAGMA application_id").fetchone()[0]
        if version == 0:
            tables = self._conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
            ).fetchone()[0]
            if tables or app_id not in (0, APPLICATION_ID):
                raise StoreError(f"{self.path}: an SQLite database, but not a chimera-cards store")
        elif app_id != APPLICATION_ID:
            raise StoreError(f"{self.path}: an SQLite database, but not a chimera-cards store")

    def _check_identity_now(self) -> int:
        # One read snapshot: otherwise another process's first migration could commit between
        # reading user_version (0) and counting tables (some), which looks like a foreign file.
        with self.snapshot():
            version = self.schema_version
            self._check_identity(version)
        return version

    def _migrate(self) -> None:
        if self._check_identity_now() == len(MIGRATIONS):
            return
        with self.transaction() as conn:
            version = self.schema_version  # another process may have migrated meanwhile
            self._check_identity(version)
            for migration in MIGRATIONS[version:]:
                if callable(migration):
                    migration(conn)
                else:
                    for statement in _split_sql(migration):
                        conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``): committed on success, rolled back on any
        exception, so a change is all-or-nothing."""
        if self._conn.in_transaction:
            raise RuntimeError("store transactions do not nest")
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise StoreWriteError(
                f"{self.path}: cannot start a write ({exc}); another process may "
                "be holding the store"
            ) from None
        try:
            yield self._conn
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise
        try:
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise StoreWriteError(
                f"{self.path}: could not commit ({exc}); nothing was stored"
            ) from None

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query inside sees one consistent state of the store."""
        if self._conn.in_transaction:
            yield self._conn
            return
        self._conn.execute("BEGIN")
        try:
            yield self._conn
        finally:
            if self._conn.in_transaction:
                self._conn.execute("COMMIT")

    # -- writing (call inside transaction()) -------------------------------------------------

    def put_blob(self, conn: sqlite3.Connection, data: bytes, sha256: str | None = None) -> str:
        """Store ``data`` under its SHA-256 (no-op if present) and return the hex digest.
        ``sha256``: that digest, when the caller has just computed it from these bytes."""
        sha = hashlib.sha256(data).hexdigest() if sha256 is None else sha256
        conn.execute(
            "INSERT OR IGNORE INTO blobs (sha256, data, size) VALUES (?, ?, ?)",
            (sha, sqlite3.Binary(data), len(data)),
        )
        return sha

    def put_bundle(self, conn: sqlite3.Connection, bundle: Bundle, *, new: bool = False) -> str:
        """Store every file of ``bundle`` as a blob, its manifest as a blob keyed by the bundle
        digest, and its file rows; returns the digest (no-op for a bundle already stored).
        ``new``: the caller knows (in this transaction) that no bundle with its digest is stored."""
        digest = bundle.digest
        stored = "SELECT 1 FROM bundle_files WHERE digest = ? LIMIT 1"
        if not new and conn.execute(stored, (digest,)).fetchone():
            return digest
        for f in bundle.files:
            self.put_blob(conn, bundle.contents[f.path], f.sha256)  # hashed when it was read
        manifest = bundle.manifest()
        conn.execute(
            "INSERT OR IGNORE INTO blobs (sha256, data, size) VALUES (?, ?, ?)",
            (digest, sqlite3.Binary(manifest), len(manifest)),
        )
        conn.executemany(
            "INSERT INTO bundle_files (digest, path, executable, size, sha256) "
            "VALUES (?, ?, ?, ?, ?)",
            [(digest, f.path, int(f.executable), f.size, f.sha256) for f in bundle.files],
        )
        return digest

    def _bundle_of(self, conn: sqlite3.Connection, sha256: str) -> tuple[str, str]:
        """(bundle digest, SKILL.md hash) for a version about to be added under ``sha256``.

        ``sha256`` is normally a digest stored by ``put_bundle``. A bare card's blob hash is also
        accepted (callers that store only SKILL.md bytes): it keeps that hash as its identity,
        as a version stored before bundles does, and its one-file bundle is stored beside it."""
        row = conn.execute(
            "SELECT sha256 FROM bundle_files WHERE digest = ? AND path = 'SKILL.md'", (sha256,)
        ).fetchone()
        if row is not None:
            return sha256, row[0]
        data = self.get_blob(sha256)
        if data is None:
            raise TamperedBlobError(f"no stored bytes for {sha256[:12]}")
        return self.put_bundle(conn, bundle_from_files({"SKILL.md": (data, False)})), sha256

    def add_version(
        self,
        conn: sqlite3.Connection,
        *,
        name: str,
        sha256: str,
        origin: str,
        final_url: str | None,
        provenance: str,
        status: str,
        reason: str = "",
        findings: Sequence[dict] = (),
        detail: dict | None = None,
        source: dict | None = None,
        skill_sha256: str | None = None,
        findings_json: str | None = None,
        new_name: bool = False,
    ) -> Version:
        """Insert a new version (its blob must be stored) and audit it as an ``import``. If
        ``status`` is active, the name's current active version is retired as superseded.
        ``findings_json``: ``canonical_json(list(findings))``, when the caller has made it.
        ``new_name``: the caller knows (in this transaction) no version has this name yet, so
        there is no active one to retire.

        ``sha256`` is the bundle digest of a bundle stored with ``put_bundle`` (a blob's own hash
        is accepted for a bare card: it is then recorded as its one-file bundle).
        ``skill_sha256``, from a caller that has just stored the bundle, is its SKILL.md hash,
        which then need not be looked up."""
        if provenance not in PROVENANCES:
            raise ValueError(f"provenance {provenance!r}")
        if status not in STATUSES:
            raise ValueError(f"status {status!r}")
        if status == "active" and not new_name:
            self._retire_active(conn, name, sha256)
        imported_at = utc_now()
        if skill_sha256 is not None:
            digest, skill_sha = sha256, skill_sha256
        else:
            digest, skill_sha = self._bundle_of(conn, sha256)
        cursor = conn.execute(
            "INSERT INTO versions (name, sha256, origin, final_url, imported_at, provenance, "
            "status, reason, findings, digest, skill_sha256, source) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                name,
                sha256,
                origin,
                final_url,
                imported_at,
                provenance,
                status,
                reason,
                canonical_json(list(findings)) if findings_json is None else findings_json,
                digest,
                skill_sha,
                canonical_json(source or {}),
            ),
        )
        version = Version(
            id=int(cursor.lastrowid or 0),
            name=name,
            sha256=sha256,
            origin=origin,
            final_url=final_url,
            imported_at=imported_at,
            provenance=provenance,
            status=status,
            reason=reason,
            findings=list(findings),
            digest=digest,
            skill_sha256=skill_sha,
            source=dict(source or {}),
        )
        self.append_audit(
            conn,
            "import",
            name,
            sha256,
            {
                "id": version.id,
                "origin": origin,
                "final_url": final_url,
                "provenance": provenance,
                "status": status,
                "reason": reason,
                **(detail or {}),
            },
        )
        return version

    def set_status(
        self,
        conn: sqlite3.Connection,
        name: str,
        sha256: str,
        status: str,
        reason: str = "",
        detail: dict | None = None,
    ) -> Version:
        """Change one version's status and audit it. Activating retires the name's current active
        version ("superseded"); that is audited too. Same status again is a no-op."""
        if status not in STATUSES:
            raise ValueError(f"status {status!r}")
        version = self.version(name, sha256)
        if version is None:
            raise UnknownVersionError(f"no version {sha256[:12]} of {name!r} in the store")
        if version.status == status:
            return version
        if status == "active":
            self._retire_active(conn, name, sha256)
        self._change_status(conn, version, status, reason, detail)
        version.status, version.reason = status, reason
        return version

    def _retire_active(self, conn: sqlite3.Connection, name: str, new_sha: str) -> None:
        current = self.active(name)
        if current is not None and current.sha256 != new_sha:
            self._change_status(conn, current, SUPERSEDED, f"superseded by {new_sha[:12]}", None)

    def _change_status(
        self, conn, version: Version, status: str, reason: str, detail: dict | None
    ) -> None:
        conn.execute(
            "UPDATE versions SET status = ?, reason = ? WHERE id = ?", (status, reason, version.id)
        )
        self.append_audit(
            conn,
            "status",
            version.name,
            version.sha256,
            {
                "id": version.id,
                "from": version.status,
                "to": status,
                "reason": reason,
                **(detail or {}),
            },
        )

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

    # -- reading -----------------------------------------------------------------------------

    def get_blob(self, sha256: str) -> bytes | None:
        """The stored bytes with this SHA-256 as stored (not re-hashed), or None."""
        row = self._conn.execute(
            "SELECT CAST(data AS BLOB) FROM blobs WHERE sha256 = ?", (sha256,)
        ).fetchone()
        return bytes(row[0]) if row else None

    def bundle_files(self, digest: str) -> list[BundleFile]:
        """The manifest rows of a stored bundle, sorted by path bytes (empty if not stored)."""
        rows = self._conn.execute(
            "SELECT path, executable, size, sha256 FROM bundle_files WHERE digest = ?", (digest,)
        ).fetchall()
        files = [BundleFile(p, bool(x), size, sha) for p, x, size, sha in rows]
        return sorted(files, key=lambda f: f.path.encode())

    def get_bundle(self, version: Version | int) -> Bundle:
        """A version's whole bundle, every file re-hashed on the way out.

        Args:
            version: the Version, or its row id.
        Returns:
            The Bundle (files sorted by path bytes, contents exact bytes).
        Raises:
            TamperedBlobError: a file or the manifest is missing, or any byte no longer hashes
                to what the manifest (and the version's digest) says.
            UnknownVersionError: no version with that id.
        """
        if not isinstance(version, Version):
            found = self.version_by_id(version)
            if found is None:
                raise UnknownVersionError(f"no version with id {version}")
            version = found
        files = self.bundle_files(version.digest)
        return self._checked_bundle(version, files, self._blobs_of({f.sha256 for f in files}))

    def get_bundles(self, versions: Sequence[Version]) -> list[Bundle]:
        """``get_bundle`` of many versions, in a few queries for any number; each bundle is
        checked (and every file re-hashed) exactly as ``get_bundle`` checks it.

        Args:
            versions: the versions, as read from this store.
        Returns:
            One Bundle per version, in order.
        Raises:
            TamperedBlobError: as ``get_bundle``, for the first version that fails.
        """
        manifests = self.bundle_files_of(v.digest for v in versions)
        blobs = self._blobs_of({f.sha256 for files in manifests.values() for f in files})
        return [self._checked_bundle(v, manifests.get(v.digest, []), blobs) for v in versions]

    def _blobs_of(self, shas: Iterable[str]) -> dict[str, bytes]:
        # The files' bytes in a few queries, not one per file.
        blobs: dict[str, bytes] = {}
        for chunk, marks in _id_chunks(shas):
            for sha, data in self._conn.execute(
                f"SELECT sha256, CAST(data AS BLOB) FROM blobs WHERE sha256 IN ({marks})", chunk
            ):
                blobs[sha] = bytes(data)
        return blobs

    def _checked_bundle(
        self, version: Version, files: list[BundleFile], blobs: Mapping[str, bytes]
    ) -> Bundle:
        label = f"{version.name} {version.sha256[:12]}"
        if not files or bundle_digest(files) != version.digest:
            raise TamperedBlobError(
                f"{label}: its file list is missing or does not match its bundle digest; "
                "run `chimera-cards verify`"
            )
        contents: dict[str, tuple[bytes, bool]] = {}
        for f in files:
            data = blobs.get(f.sha256)
            if data is None or len(data) != f.size:
                raise _tampered_file(label, f.path)
            contents[f.path] = (data, f.executable)
        bundle = bundle_from_files(contents, where=label)  # hashes every file, once
        hashed = {f.path: f.sha256 for f in bundle.files}
        for f in files:
            if hashed.get(f.path) != f.sha256:
                raise _tampered_file(label, f.path)
        skill = bundle.file(SKILL_FILE)
        # The version's identity must name these bytes: its bundle digest, or (a version stored
        # before bundles) the SKILL.md hash of a bundle that is SKILL.md alone.
        legacy = len(bundle.files) == 1 and skill is not None and skill.sha256 == version.sha256
        if (
            bundle.digest != version.digest
            or skill is None
            or skill.sha256 != version.skill_sha256
            or (version.sha256 != bundle.digest and not legacy)
        ):
            raise TamperedBlobError(f"{label}: bundle does not hash to its digest")
        return bundle

    def skill_bytes(self, version: Version) -> bytes:
        """The exact SKILL.md bytes of a version, re-hashed (TamperedBlobError if they differ)."""
        data = self.get_blob(version.skill_sha256)
        if data is None or hashlib.sha256(data).hexdigest() != version.skill_sha256:
            raise TamperedBlobError(
                f"{version.name} {version.sha256[:12]}: stored SKILL.md bytes are missing or do "
                "not match their hash; run `chimera-cards verify`"
            )
        return data

    def version_by_id(self, version_id: int) -> Version | None:
        """The version row with this id, or None."""
        row = self._conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM versions WHERE id = ?", (version_id,)
        ).fetchone()
        return Version.from_row(row) if row else None

    def versions_by_digest(self, digest: str) -> list[Version]:
        """Every version whose bundle has this digest (whatever its status), oldest first."""
        return [
            Version.from_row(row)
            for row in self._conn.execute(
                f"SELECT {_VERSION_COLUMNS} FROM versions WHERE digest = ? OR sha256 = ? "
                "ORDER BY id",
                (digest, digest),
            )
        ]

    def versions_matching(
        self, names: Iterable[str], digests: Iterable[str], *, details: bool = True
    ) -> list[Version]:
        """Every version of one of ``names``, or whose bundle digest (or, stored before bundles,
        SKILL.md hash) is one of ``digests``; oldest first. A few queries for any number.

        Args:
            names: card names.
            digests: bundle digests.
            details: read each version's lint findings and fetch details (False: both left
                empty, for a caller that never looks at them).
        Returns:
            The versions, each once, by id.
        """
        columns = _VERSION_COLUMNS if details else _VERSION_COLUMNS_BARE
        found: dict[int, Version] = {}
        wanted_names, wanted_digests = sorted(set(names)), sorted(set(digests))
        # One query per chunk of each list: a version matching both is read once, not twice.
        for start in range(0, max(len(wanted_names), len(wanted_digests)), _ID_CHUNK):
            some_names = wanted_names[start : start + _ID_CHUNK]
            some_digests = wanted_digests[start : start + _ID_CHUNK]
            where = []
            if some_names:
                where.append(f"name IN ({','.join('?' * len(some_names))})")
            if some_digests:
                marks = ",".join("?" * len(some_digests))
                where.append(f"digest IN ({marks}) OR sha256 IN ({marks})")
            for row in self._conn.execute(
                f"SELECT {columns} FROM versions WHERE {' OR '.join(where)}",
                some_names + some_digests * 2,
            ):
                if row[0] not in found:
                    found[row[0]] = Version.from_row(row)
        return [found[k] for k in sorted(found)]

    def bundle_files_of(self, digests: Iterable[str]) -> dict[str, list[BundleFile]]:
        """``bundle_files`` of many bundles at once: digest -> its files sorted by path bytes
        (a digest with no stored manifest rows is left out)."""
        out: dict[str, list[BundleFile]] = {}
        for chunk, marks in _id_chunks(digests):
            for digest, path, executable, size, sha in self._conn.execute(
                "SELECT digest, path, executable, size, sha256 FROM bundle_files "
                f"WHERE digest IN ({marks})",
                chunk,
            ):
                out.setdefault(digest, []).append(BundleFile(path, bool(executable), size, sha))
        for files in out.values():
            files.sort(key=lambda f: f.path.encode())
        return out

    def unknown_digests(self, digests: Iterable[str]) -> set[str]:
        """Which of these digests no version has (as its bundle digest or, stored before
        bundles, its SKILL.md hash) and no stored bundle has: a few queries for any number."""
        return self._absent(
            digests,
            "SELECT digest FROM versions WHERE digest IN ({marks}) "
            "UNION SELECT sha256 FROM versions WHERE sha256 IN ({marks}) "
            "UNION SELECT digest FROM bundle_files WHERE digest IN ({marks})",
            uses=3,
        )

    def unknown_names(self, names: Iterable[str]) -> set[str]:
        """Which of these names no version has: a few queries for any number."""
        return self._absent(names, "SELECT DISTINCT name FROM versions WHERE name IN ({marks})")

    def _absent(self, values: Iterable[str], query: str, *, uses: int = 1) -> set[str]:
        """The values ``query`` does not return (see ``_present``)."""
        wanted = set(values)
        return wanted - self._present(wanted, query, uses=uses)

    def _present(self, values: Iterable[str], query: str, *, uses: int = 1) -> set[str]:
        """The values ``query`` returns, asked a chunk at a time; ``query`` holds ``{marks}``
        ``uses`` times, each the chunk's placeholders."""
        found: set[str] = set()
        for chunk, marks in _id_chunks(values):
            sql = query.format(marks=marks)
            found.update(row[0] for row in self._conn.execute(sql, chunk * uses))
        return found

    def stored_bundles(self, digests: Iterable[str]) -> set[str]:
        """Which of these bundle digests have their manifest rows stored."""
        return self._present(
            digests, "SELECT DISTINCT digest FROM bundle_files WHERE digest IN ({marks})"
        )

    def envelopes_of(self, shas: Iterable[str]) -> dict[str, list[str]]:
        """``envelopes`` about many SHA-256s at once: sha256 -> envelopes in the order they were
        stored (a SHA-256 nothing was signed about is left out)."""
        rows: list[tuple[int, str, str]] = []
        for chunk, marks in _id_chunks(shas):
            rows += self._conn.execute(
                f"SELECT id, sha256, envelope FROM statements WHERE sha256 IN ({marks})", chunk
            ).fetchall()
        out: dict[str, list[str]] = {}
        for _, sha, envelope in sorted(rows):
            out.setdefault(sha, []).append(envelope)
        return out

    def approved_bundle(self, name: str) -> tuple[Version, Bundle] | None:
        """The bundle of ``name`` an agent may be given now, or None.

        That is the active version, if the gate passes it on this very call (its approvals
        verify against today's trust list and threshold, or it is a clean local import) and
        every one of its files re-hashes to the manifest.
        """
        from chimera_cards.retrieve import gate_version  # retrieve imports this module

        with self.snapshot():
            version = self.active(name)
            if version is None:
                return None
            decision = gate_version(self, version)
            if not decision.ok:
                return None
            return version, self.get_bundle(version)

    def versions(
        self,
        name: str | None = None,
        status: str | None = None,
        *,
        statuses: Sequence[str] | None = None,
        names: Sequence[str] | None = None,
        order: str = "name",
    ) -> list[Version]:
        """Versions matching every filter given.

        Args:
            name: only this card's versions.
            status: only versions with this status.
            statuses: only versions with one of these statuses.
            names: only versions of one of these cards.
            order: ``"name"`` (by name, then import order) or ``"id"`` (import order).

        Returns:
            The matching versions, in the order asked for.
        """
        where, args = [], []
        if name is not None:
            where.append("name = ?")
            args.append(name)
        if status is not None:
            where.append("status = ?")
            args.append(status)
        for column, values in (("status", statuses), ("name", names)):
            if values is not None:
                where.append(f"{column} IN ({','.join('?' * len(values))})")
                args.extend(values)
        sql = f"SELECT {_VERSION_COLUMNS} FROM versions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id" if order == "id" else " ORDER BY name, id"
        return [Version.from_row(row) for row in self._conn.execute(sql, args)]

    def active(self, name: str) -> Version | None:
        """The active version of ``name``, if it has one (there is at most one)."""
        row = self._conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM versions WHERE name = ? AND status = 'active'", (name,)
        ).fetchone()
        return Version.from_row(row) if row else None

    def version(self, name: str, sha256: str) -> Version | None:
        """The version of ``name`` with exactly these bytes, if stored."""
        row = self._conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM versions WHERE name = ? AND sha256 = ?", (name, sha256)
        ).fetchone()
        return Version.from_row(row) if row else None

    def version_keys(self) -> list[tuple[str, str]]:
        """(name, sha256) of every version in import order: what a full pass needs, without
        building a Version (and parsing its findings) for each."""
        return self._conn.execute("SELECT name, sha256 FROM versions ORDER BY id").fetchall()

    def status_of(self, version_id: int) -> str | None:
        """The current status of the version with this row id."""
        row = self._conn.execute(
            "SELECT status FROM versions WHERE id = ?", (version_id,)
        ).fetchone()
        return row[0] if row else None

    def last_retired(
        self, name: str, *, exclude: str = "", reason: str | None = None
    ) -> Version | None:
        """The most recently imported retired version of ``name`` (not ``exclude``), optionally
        only one retired with exactly ``reason``."""
        sql = (
            f"SELECT {_VERSION_COLUMNS} FROM versions WHERE name = ? AND status = ? AND sha256 != ?"
        )
        args: list = [name, SUPERSEDED, exclude]
        if reason is not None:
            sql += " AND reason = ?"
            args.append(reason)
        row = self._conn.execute(sql + " ORDER BY id DESC LIMIT 1", args).fetchone()
        return Version.from_row(row) if row else None

    def version_with_bytes(self, sha256: str) -> Version | None:
        """The version holding exactly these bytes, if there is one (a card's name is in its
        bytes, so there is at most one unless the store was edited by hand)."""
        rows = self._conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM versions WHERE sha256 = ? LIMIT 2", (sha256,)
        ).fetchall()
        return Version.from_row(rows[0]) if len(rows) == 1 else None

    def find_version(self, name: str, sha_prefix: str) -> Version:
        """The version of ``name`` whose hash starts with ``sha_prefix`` (at least 6 hex digits)."""
        prefix = sha_prefix.strip().lower()
        if len(prefix) < 6 or not is_hex(prefix):
            raise UsageError(f"--version {sha_prefix!r}: give at least 6 hex digits of the SHA-256")
        matches = [v for v in self.versions(name=name) if v.sha256.startswith(prefix)]
        if not matches:
            raise UnknownVersionError(f"no version {prefix} of {name!r} in the store")
        if len(matches) > 1:
            raise UsageError(
                f"{prefix} matches {len(matches)} versions of {name!r}; give more digits"
            )
        return matches[0]

    def names(self) -> list[str]:
        """Every card name with at least one stored version, sorted."""
        return [
            row[0] for row in self._conn.execute("SELECT DISTINCT name FROM versions ORDER BY name")
        ]

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

    # -- trust list, settings and review statements --------------------------------------------

    def trust_rows(self) -> list[tuple[str, str, str]]:
        """Every trusted key as (name, keyid, public key text), by name."""
        return self._conn.execute("SELECT name, keyid, pubkey FROM trust ORDER BY name").fetchall()

    def add_trust_row(self, name: str, keyid: str, pubkey: str) -> bool:
        """Record a trusted key (call inside transaction()); False if exactly it is there."""
        cursor = self._conn.execute(
            "INSERT OR IGNORE INTO trust(name, keyid, pubkey, added_at) VALUES (?, ?, ?, ?)",
            (name, keyid, pubkey, utc_now()),
        )
        return cursor.rowcount > 0

    def remove_trust_row(self, name: str) -> None:
        """Forget the trusted key called ``name`` (call inside transaction())."""
        self._conn.execute("DELETE FROM trust WHERE name = ?", (name,))

    def get_setting(self, key: str) -> str | None:
        """A review setting's stored text, or None when it was never set."""
        row = self._conn.execute(
            "SELECT value FROM review_settings WHERE key = ?", (key,)
        ).fetchone()
        return row[0] if row else None

    def set_setting(self, key: str, value: str) -> None:
        """Store a review setting (call inside transaction())."""
        self._conn.execute(
            "INSERT INTO review_settings(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def envelopes(self, sha256: str, name: str | None = None) -> list[str]:
        """The stored statement envelopes about these bytes (and this name, if given), in the
        order they were stored."""
        if name is None:
            rows = self._conn.execute(
                "SELECT envelope FROM statements WHERE sha256 = ? ORDER BY id", (sha256,)
            )
        else:
            rows = self._conn.execute(
                "SELECT envelope FROM statements WHERE sha256 = ? AND name = ? ORDER BY id",
                (sha256, name),
            )
        return [row[0] for row in rows]

    def all_statements(self) -> list[tuple[str, str, str]]:
        """Every stored statement as (name, sha256, envelope), in the order they were stored."""
        return self._conn.execute(
            "SELECT name, sha256, envelope FROM statements ORDER BY id"
        ).fetchall()

    def statement_slot(self, sha256: str, keyid: str, decision: str) -> tuple[int, str] | None:
        """The (row id, envelope) holding what ``keyid`` claims it decided about these bytes."""
        return self._conn.execute(
            "SELECT id, envelope FROM statements WHERE sha256 = ? AND keyid = ? AND decision = ?",
            (sha256, keyid, decision),
        ).fetchone()

    def put_statement(
        self,
        *,
        name: str,
        sha256: str,
        decision: str,
        keyid: str,
        signed_at: str,
        envelope: str,
        replace_id: int | None = None,
    ) -> None:
        """Store a statement envelope, or replace row ``replace_id`` (call inside transaction())."""
        if replace_id is None:
            self._conn.execute(
                "INSERT INTO statements(name, sha256, decision, keyid, signed_at, envelope) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (name, sha256, decision, keyid, signed_at, envelope),
            )
        else:
            self._conn.execute(
                "UPDATE statements SET name = ?, signed_at = ?, envelope = ? WHERE id = ?",
                (name, signed_at, envelope, replace_id),
            )

    # -- remembered verdicts (trust.evaluate_remembered) ---------------------------------------

    def recall_verdicts(self, keys: Sequence[str]) -> dict[str, str]:
        """The remembered verdicts (JSON text) for these keys (hex), where there are some."""
        found: dict[str, str] = {}
        for chunk, marks in _id_chunks(keys):
            found.update(
                self._conn.execute(
                    f"SELECT key, verdict FROM verdict_memo WHERE key IN ({marks})", chunk
                ).fetchall()
            )
        return found

    def remember_verdicts(self, rows: Mapping[str, str]) -> bool:
        """Keep verdicts (key hex -> verdict JSON) for later runs.

        Inside ``transaction()`` they join it. Otherwise they get a short transaction of their
        own that never waits: a store that is read-only, locked by another writer or full is
        left as it is (False), since a memo is never worth waiting or failing for.

        Returns:
            Whether the rows were written (or joined the open transaction).
        """
        if not rows:
            return True
        if self._conn.in_transaction:
            self._put_verdicts(rows)
            return True
        self._conn.execute("PRAGMA busy_timeout = 0")
        try:
            with self.transaction():
                self._put_verdicts(rows)
            return True
        except (sqlite3.Error, StoreWriteError):
            return False
        finally:
            self._conn.execute(f"PRAGMA busy_timeout = {self._busy_ms}")

    def _put_verdicts(self, rows: Mapping[str, str]) -> None:
        count = self._conn.execute("SELECT count(*) FROM verdict_memo").fetchone()[0]
        if count + len(rows) > MAX_REMEMBERED_VERDICTS:
            self._conn.execute("DELETE FROM verdict_memo")
        self._conn.executemany(
            "INSERT OR REPLACE INTO verdict_memo (key, verdict) VALUES (?, ?)", rows.items()
        )

    def forget_verdicts(self) -> None:
        """Drop every remembered verdict (the next check verifies every signature again)."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM verdict_memo")

    # -- the search index ----------------------------------------------------------------------

    def index_dirty(self) -> bool:
        """Whether any version waits to be indexed."""
        return self._conn.execute("SELECT 1 FROM index_queue LIMIT 1").fetchone() is not None

    def index_backlog(self) -> int:
        """How many active versions wait to be indexed (they cannot match until they are)."""
        return self._conn.execute(
            "SELECT count(*) FROM index_queue q JOIN versions v ON v.id = q.version_id "
            "WHERE v.status = 'active'"
        ).fetchone()[0]

    def index_queue(self) -> Iterator[tuple[int, str | None, bytes | None, str | None]]:
        """Versions waiting to be indexed, as (version id, name, blob bytes, problem).

        A row that cannot be read (text that is not UTF-8, a name that is not text) comes back
        with name None and a problem saying why, so one broken row never stops the others.
        """
        ids = [row[0] for row in self._conn.execute("SELECT version_id FROM index_queue")]
        for vid in ids:
            try:
                row = self._conn.execute(
                    "SELECT v.name, CAST(b.data AS BLOB) FROM versions v "
                    "LEFT JOIN blobs b ON b.sha256 = coalesce(v.skill_sha256, v.sha256) "
                    "WHERE v.id = ?",
                    (vid,),
                ).fetchone()
            except sqlite3.Error as exc:
                yield vid, None, None, f"version row {vid} cannot be read ({exc})"
                continue
            if row is None:
                continue  # the version is gone; clear_index_queue drops its entry
            name, data = row
            if type(name) is not str:
                yield vid, None, None, f"version row {vid}: its name is not text"
                continue
            yield vid, name, None if data is None else bytes(data), None

    def index_version(self, version_id: int, name: str, description: str, triggers: str) -> None:
        """(Re)write one version's index entry and take it off the queue (inside transaction())."""
        self._conn.execute("DELETE FROM card_fts WHERE rowid = ?", (version_id,))
        self._conn.execute(
            "INSERT INTO card_fts(rowid, name, description, triggers) VALUES (?, ?, ?, ?)",
            (version_id, name, description, triggers),
        )
        self._conn.execute("DELETE FROM index_queue WHERE version_id = ?", (version_id,))

    def clear_index_queue(self) -> None:
        """Drop every queue entry, including those of versions that no longer exist."""
        self._conn.execute("DELETE FROM index_queue")

    def search_index(
        self, phrases: Sequence[str], weights: Sequence[float], limit: int, offset: int = 0
    ) -> list[tuple[int, float]]:
        """Index entries matching any of ``phrases``, best BM25 first, whatever their status.

        Ranked on the FTS5 table alone, returning only rowids and scores; join the page with
        ``versions_by_id`` afterwards. When two to six distinct phrases are asked for, the entries
        matching at least two of them are ranked first, and the ones whose score no entry matching
        a single phrase can reach are returned without scoring the rest (the MaxScore argument:
        with SQLite's BM25 a phrase adds at most ``idf * (k1 + 1)``). That page equals the head of
        the full ranking; it may be shorter than ``limit``, so only an empty page means the end.

        Args:
            phrases: FTS5 phrases, each already quoted and safe (see ``retrieve.fts_phrases``).
            weights: BM25 weights for the name, description and triggers columns (positive).
            limit: at most this many results.
            offset: skip this many of the best results first.

        Returns:
            (version id, score) pairs; lower scores are better, as SQLite reports BM25. Ties go
            to the lower rowid, so every page of a query agrees with every other.
        """
        bm25 = "bm25(card_fts, " + ", ".join(repr(float(w)) for w in weights) + ")"
        fts = " OR ".join(phrases)
        distinct = list(dict.fromkeys(phrases))
        if 2 <= len(distinct) <= _MAX_PAIRED_PHRASES and all(w > 0 for w in weights):
            proven = self._proven_head(phrases, distinct, bm25, offset + limit)
            if offset < len(proven):
                return proven[offset : offset + limit]
        return self._conn.execute(
            f"SELECT rowid, {bm25} AS score FROM card_fts WHERE card_fts MATCH ? "
            "ORDER BY score, rowid LIMIT ? OFFSET ?",
            (fts, limit, offset),
        ).fetchall()

    def _proven_head(
        self, phrases: Sequence[str], distinct: list[str], bm25: str, count: int
    ) -> list[tuple[int, float]]:
        """The best ``count`` entries matching two or more of ``distinct``, cut where an entry
        matching only one phrase could rank higher: what is left is the head of the full ranking.
        """
        rows = self._conn.execute("SELECT rowid FROM card_fts ORDER BY rowid DESC LIMIT 1")
        top = rows.fetchone()
        lowest = self._conn.execute("SELECT rowid FROM card_fts ORDER BY rowid LIMIT 1").fetchone()
        if top is None or lowest[0] < 1:
            return []
        rows_bound = top[0]  # positive distinct rowids: never fewer than the rows BM25 counts
        best_single = 0.0
        for phrase in distinct:
            hits = self._conn.execute(
                "SELECT count(*) FROM card_fts WHERE card_fts MATCH ?", (phrase,)
            ).fetchone()[0]
            # SQLite's IDF, which grows with the row count: the bound row count bounds it.
            idf = max(math.log((rows_bound - hits + 0.5) / (hits + 0.5)), 1e-6)
            best_single = max(best_single, phrases.count(phrase) * idf * (_BM25_K1 + 1.0))
        pairs = " OR ".join(f"({a} AND {b})" for a, b in itertools.combinations(distinct, 2))
        # "+rowid" keeps SQLite from re-running the MATCH once per candidate (each run recounts
        # every phrase for its IDF); a scan filtered by the candidates scores only them.
        ranked = self._conn.execute(
            f"SELECT rowid, {bm25} AS score FROM card_fts WHERE card_fts MATCH ? "
            "AND +rowid IN (SELECT rowid FROM card_fts WHERE card_fts MATCH ?) "
            "ORDER BY score, rowid LIMIT ?",
            (" OR ".join(phrases), pairs, count),
        ).fetchall()
        cut = -best_single * (1 + 1e-9)  # a margin for rounding in the last bits
        head = 0
        while head < len(ranked) and ranked[head][1] < cut:
            head += 1
        return ranked[:head]

    def versions_by_id(
        self, ids: Sequence[int], *, status: str | None = None
    ) -> tuple[dict[int, Version], list[tuple[int, str]]]:
        """The versions with these row ids (only those with ``status``, if given).

        Returns:
            ({id: version}, [(id, problem)]): a row that cannot be read (text that is not UTF-8,
            a column of the wrong type) is a problem, never an exception, so one broken row
            never hides the others.
        """
        found: dict[int, Version] = {}
        problems: list[tuple[int, str]] = []
        if len(ids) > _ID_CHUNK:  # stay far below SQLite's limit on bound parameters
            for i in range(0, len(ids), _ID_CHUNK):
                more, bad = self.versions_by_id(ids[i : i + _ID_CHUNK], status=status)
                found.update(more)
                problems.extend(bad)
            return found, problems
        if not ids:
            return found, problems
        sql = f"SELECT {_VERSION_COLUMNS} FROM versions WHERE id IN "
        extra = "" if status is None else " AND status = ?"
        tail = () if status is None else (status,)
        rows: list | None
        try:
            rows = self._conn.execute(
                sql + f"({','.join('?' * len(ids))}){extra}", (*ids, *tail)
            ).fetchall()
        except sqlite3.Error:
            rows = None  # some row is unreadable: read them one by one to find which
        if rows is None:
            rows = []
            for vid in ids:
                try:
                    row = self._conn.execute(sql + f"(?){extra}", (vid, *tail)).fetchone()
                except sqlite3.Error as exc:
                    problems.append((vid, f"version row {vid} cannot be read ({exc})"))
                    continue
                if row is not None:
                    rows.append(row)
        for row in rows:
            try:
                found[row[0]] = _checked_version(row)
            except (ValueError, TypeError) as exc:
                problems.append((row[0], f"version row {row[0]} is malformed ({exc})"))
        return found, problems

    def versions_tolerant(
        self, *, status: str | None = None, statuses: Sequence[str] | None = None
    ) -> tuple[list[Version], list[str]]:
        """Like ``versions(status=..., statuses=..., order="id")``, but a row that cannot be read
        is reported in the second list instead of failing the whole listing."""
        where, args = [], []
        if status is not None:
            where.append("status = ?")
            args.append(status)
        if statuses is not None:
            where.append(f"status IN ({','.join('?' * len(statuses))})")
            args.extend(statuses)
        sql = "SELECT id FROM versions" + (" WHERE " + " AND ".join(where) if where else "")
        ids = [row[0] for row in self._conn.execute(sql + " ORDER BY id", args)]
        found, problems = self.versions_by_id(ids)
        return [found[i] for i in ids if i in found], [text for _, text in problems]

    def search_names(self, fts: str, status: str, limit: int) -> list[str]:
        """Names of versions with ``status`` whose index entry matches ``fts`` (best first).

        Args:
            fts: an FTS5 query (already safe: see ``retrieve.fts_query``).
            status: e.g. ``pending``.
            limit: at most this many names.

        Returns:
            Distinct names.
        """
        rows = self._conn.execute(
            "SELECT v.name FROM card_fts JOIN versions v ON v.id = card_fts.rowid "
            "WHERE card_fts MATCH ? AND v.status = ? ORDER BY bm25(card_fts) LIMIT ?",
            (fts, status, 4 * limit),
        ).fetchall()
        return list(dict.fromkeys(row[0] for row in rows))[:limit]

    @contextmanager
    def savepoint(self, name: str = "step") -> Iterator[None]:
        """A nested all-or-nothing step inside transaction(): on an exception, only this step is
        undone and the exception propagates."""
        self._conn.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            # A disk-full or I/O error makes SQLite roll back the whole transaction itself; then
            # there is no savepoint left to return to.
            if self._conn.in_transaction:
                self._conn.execute(f"ROLLBACK TO {name}")
                self._conn.execute(f"RELEASE {name}")
            raise
        self._conn.execute(f"RELEASE {name}")


def _loads_or_raw(text: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError:
        return {"unparsable": text}
    return value if isinstance(value, dict) else {"value": value}


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
    records: {(name, sha256): [id, status, provenance, seq of its import entry]}."""
    problems: list[Problem] = []
    state: dict[tuple[str, str], list] = {}
    prev = GENESIS_HASH
    expected_seq = 1
    count = 0
    sha256, enc, text_form, detail_object = hashlib.sha256, _encode_str, _CHAIN_TEXT, _detail_object
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
            # audit_hash inlined for the row shape the store writes (every field text, name and
            # sha256 text or NULL, seq an integer); anything else goes through audit_hash itself.
            # A test pins that both give the same hash.
            if (
                type(seq) is int
                and type(ts) is str
                and type(event) is str
                and type(detail) is str
                and type(prev_hash) is str
                and (name is None or type(name) is str)
                and (sha is None or type(sha) is str)
            ):
                actual = sha256(
                    (
                        text_form
                        % (
                            enc(detail),
                            enc(event),
                            "null" if name is None else enc(name),
                            enc(prev_hash),
                            seq,
                            "null" if sha is None else enc(sha),
                            enc(ts),
                        )
                    ).encode()
                ).hexdigest()
            else:
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
                ]
            elif (name, sha) in state:
                state[(name, sha)][1] = info.get("to")
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
    for vid, name, sha, status, provenance in conn.execute(
        "SELECT id, name, sha256, status, provenance FROM versions ORDER BY id"
    ):
        count += 1
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
        files.setdefault(digest, []).append(BundleFile(path, bool(executable), size, sha))
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


# Audit events that change the trust list and the threshold; verify replays them.
TRUST_EVENTS = ("trust-add", "trust-remove", "trust-threshold")
THRESHOLD_SETTING = "trust.threshold"


def check_trust(store: Store, conn: sqlite3.Connection) -> list[Problem]:
    """Replay the trust changes in the audit log: the trust list and the threshold stored now
    must be exactly what the log says was set (so a key inserted by hand is reported).

    Returns:
        One Problem per key or setting that differs from the log.
    """
    problems: list[Problem] = []
    keys: dict[str, dict] = {}
    threshold: str | None = None
    for event, detail in conn.execute(
        "SELECT event, detail FROM audit WHERE event IN (?, ?, ?) ORDER BY seq", TRUST_EVENTS
    ):
        info = _detail_object(detail) or {}
        name = info.get("name")
        if event == "trust-add" and isinstance(name, str):
            keys[name] = info
        elif event == "trust-remove" and isinstance(name, str):
            keys.pop(name, None)
        elif event == "trust-threshold":
            threshold = str(info.get("threshold"))
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
    return problems


def resolve_hook(spec: str | Callable) -> Callable:
    """A hook given as a callable, or as ``"module:function"`` loaded when first needed (so the
    store does not import the review code that registers itself here)."""
    if callable(spec):
        return spec
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def verify_store(
    store: Store, *, record: bool = True, extra_checks: Iterable[str | Callable] | None = None
) -> VerifyReport:
    """Check blobs, versions and the audit chain (plus ``EXTRA_VERIFY_CHECKS``, or
    ``extra_checks`` if given) in one consistent snapshot; then, if ``record``, append a
    ``verify`` audit entry with the outcome. Returns the report; never raises for tampering."""
    start = time.perf_counter()
    checks = EXTRA_VERIFY_CHECKS if extra_checks is None else tuple(extra_checks)
    with store.snapshot() as conn:
        problems, blob_count, total = check_blobs(store, conn)
        chain_problems, entries, state = check_audit_chain(store, conn)
        version_problems, version_count = check_versions(store, conn, state)
        problems += chain_problems + version_problems + check_trust(store, conn)
        problems += check_bundles(store, conn)
        for check in checks:
            fn = resolve_hook(check)
            problems.extend(fn(store, conn))
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


# -- export ---------------------------------------------------------------------------------


@dataclass
class ExportResult:
    """What ``export_card`` wrote, and where."""

    name: str
    sha256: str
    status: str
    path: str  # DIR/NAME/SKILL.md
    files: list[str] = field(default_factory=list)  # anything EXPORT_HOOKS wrote beside it
    digest: str = ""  # the bundle digest
    bundle_files: list[str] = field(default_factory=list)  # every file of the bundle written

    def to_dict(self) -> dict:
        return asdict(self)


def select_version(store: Store, name: str, sha_prefix: str | None = None) -> Version:
    """``sha_prefix`` given: that version. Otherwise the active one, else the newest."""
    if sha_prefix:
        return store.find_version(name, sha_prefix)
    found = store.versions(name=name)
    if not found:
        raise UnknownCardError(f"no card named {name!r} in the store")
    return store.active(name) or found[-1]


def _choose_export_version(store: Store, name: str, sha_prefix: str | None) -> Version:
    if sha_prefix:
        return store.find_version(name, sha_prefix)
    version = store.active(name)
    if version is None:
        others = store.versions(name=name)
        if not others:
            raise UnknownCardError(f"no card named {name!r} in the store")
        listed = ", ".join(f"{v.sha256[:12]} {v.status}" for v in others)
        raise UnknownVersionError(
            f"{name} has no active version ({listed}); pass --version SHA --unapproved"
        )
    return version


def _check_export_target(target: Path) -> None:
    """Refuse to write through a symlink, or to replace anything but a skill folder (or an
    empty folder): the export stays inside the folder the user named."""
    if target.is_symlink():
        raise LinkEscapeError(f"{target} is a symlink; refusing to write through it")
    if target.exists() and not target.is_dir():
        raise UnsafeTargetError(f"{target}: exists and is not a folder; refusing to write there")
    if target.is_dir() and any(target.iterdir()):
        skill = target / SKILL_FILE
        if skill.is_symlink() or (skill.exists() and not skill.is_file()):
            raise LinkEscapeError(
                f"{skill}: exists and is not a regular file; refusing to replace it"
            )
        if not skill.is_file():
            raise UnsafeTargetError(
                f"{target}: exists and is not a skill folder (no {SKILL_FILE}); refusing to "
                "replace it"
            )


def write_bundle_dir(bundle: Bundle, staging: Path) -> None:
    """Write every file of ``bundle`` under the new folder ``staging`` (executable bit kept)."""
    for f in bundle.files:
        target = staging.joinpath(*f.path.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755 if f.executable else 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(bundle.contents[f.path])
        os.chmod(target, 0o755 if f.executable else 0o644)  # the umask must not drop the bit


def export_card(
    store: Store,
    name: str,
    directory: str | os.PathLike,
    *,
    sha_prefix: str | None = None,
    unapproved: bool = False,
) -> ExportResult:
    """Write the whole bundle of ``name`` to ``directory/name/``, byte-identical, exec bits kept,
    plus ``approvals.jsonl`` (``EXPORT_HOOKS``).

    Without ``sha_prefix`` the active version is exported. Only a version the gate passes now
    (approved, or a clean local import) is written unless ``unapproved``: exporting "the skill"
    must not quietly hand out a pending or rejected one. Every file is re-hashed first, and the
    folder is built beside the target and renamed into place, so the target holds the old
    folder or the new one, never a mix.

    Args:
        store: the open store.
        name: the skill's name.
        directory: the parent folder; the skill goes to ``directory/name``.
        sha_prefix: a version's hash (or its first 6+ hex digits) instead of the active one.
        unapproved: allow a version the gate does not pass (pending, rejected, retired).
    Returns:
        What was written.
    """
    from chimera_cards.retrieve import gate_version  # retrieve imports this module

    with store.snapshot():
        version = _choose_export_version(store, name, sha_prefix)
        check_storable_name(version.name)
        bundle = store.get_bundle(version)  # tampered bytes are refused whatever the status
        if not unapproved:
            decision = gate_version(store, version)
            if not decision.ok:
                raise UnapprovedExportError(
                    f"{version.name} {version.sha256[:12]} is not approved "
                    f"({version.status}: {decision.reason}); pass --unapproved to export it anyway"
                )
    import shutil  # with tempfile: only for an export, not every command
    import tempfile

    parent = Path(directory)
    target = parent / version.name
    _check_export_target(target)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{version.name}.", dir=parent))
    except OSError as exc:
        raise WriteError(f"cannot write {parent}: {exc.strerror or exc}") from None
    old = None
    try:
        write_bundle_dir(bundle, staging)
        extras = []
        for spec in EXPORT_HOOKS:
            written = resolve_hook(spec)(store, version.name, version.sha256, staging)
            if written:
                extras.append(Path(written).name)
        staging.chmod(0o755)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{version.name}.old.", dir=parent))
            os.rename(target, old / "x")
        os.rename(staging, target)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if old is not None and not target.exists():
            os.rename(old / "x", target)
        if isinstance(exc, OSError):
            raise WriteError(f"cannot write {target}: {exc.strerror or exc}") from None
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return ExportResult(
        name=version.name,
        sha256=version.sha256,
        status=version.status,
        path=str(target / SKILL_FILE),
        files=[str(target / n) for n in extras],
        digest=version.digest,
        bundle_files=[f.path for f in bundle.files],
    )
