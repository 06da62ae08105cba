"""The store's SQLite connection: opening (identity, WAL, migrations) and transactions.

Every change runs inside ``transaction()`` (``BEGIN IMMEDIATE``), so concurrent writers queue on
the busy timeout instead of failing, and a process killed mid-change leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from chimera_cards._store.location import default_store_path
from chimera_cards._store.schema import MIGRATIONS, _split_sql
from chimera_cards.errors import (
    StoreError,
    StoreWriteError,
)

TYPE_CHECKING = False  # typing is not imported at run time: check and install start fast
if TYPE_CHECKING:
    from typing import Self

# 'CHMC': marks the SQLite file as ours, so we never migrate someone else's database.
APPLICATION_ID = 0x43484D43
SQLITE_HEADER = b"SQLite format 3\x00"
DEFAULT_TIMEOUT = 30.0


def utc_now() -> str:
    """Now in UTC as ISO 8601 with microseconds and a ``Z``: every timestamp the store writes."""
    from datetime import UTC, datetime  # only when writing: reading a store never needs it

    # isoformat is several times faster than strftime("%Y-%m-%dT%H:%M:%S.%fZ"), same text.
    return datetime.now(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


_ID_CHUNK = 500


def _id_chunks(values: Iterable[str]) -> Iterator[tuple[list[str], str]]:
    """The distinct ``values``, sorted, ``_ID_CHUNK`` at a time, each with its ``?`` marks:
    SQLite bounds how many parameters one statement may bind."""
    wanted = sorted(set(values))
    for start in range(0, len(wanted), _ID_CHUNK):
        chunk = wanted[start : start + _ID_CHUNK]
        yield chunk, ",".join("?" * len(chunk))


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


def _loads_or_raw(text: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError:
        return {"unparsable": text}
    return value if isinstance(value, dict) else {"value": value}


class StoreConnection:
    """The connection and its transactions; the table families build on it."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        create: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        # What the caller should tell its user about the store as opened (one line each).
        self.warnings: list[str] = []
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
            self._after_open()
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

    def __enter__(self) -> Self:
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
        self._after_commit()

    def _after_open(self) -> None:
        """Called once the store is open and migrated (a table family checks its state)."""

    def _after_commit(self) -> None:
        """Called after every committed write transaction."""

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
