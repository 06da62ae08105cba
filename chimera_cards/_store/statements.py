"""Signed statements, trust rows, settings and the remembered-verdict cache."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence

from chimera_cards._store.connection import _id_chunks, utc_now
from chimera_cards._store.versions import VersionsMixin
from chimera_cards.errors import (
    StoreWriteError,
)

# More rows than this and the memo starts over: refilling costs one verification per version.
MAX_REMEMBERED_VERDICTS = 100_000


# Audit events that change the trust list, the threshold and the default expiry of new
# approvals; verify replays them.
TRUST_EVENTS = ("trust-add", "trust-remove", "trust-threshold", "trust-expires")
THRESHOLD_SETTING = "trust.threshold"
EXPIRES_SETTING = "trust.expires"


class StatementsMixin(VersionsMixin):
    """Statements, trust rows, settings and the verdict memo."""

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

    def statements_of_name(self, name: str) -> dict[str, list[str]]:
        """Every statement claiming to be about a version of ``name``: sha256 -> envelopes in
        the order they were stored (the name's signed history, for supersession)."""
        out: dict[str, list[str]] = {}
        for sha, envelope in self._conn.execute(
            "SELECT sha256, envelope FROM statements WHERE name = ? ORDER BY id", (name,)
        ):
            out.setdefault(sha, []).append(envelope)
        return out

    def name_floor(self, name: str) -> tuple[int, int, str] | None:
        """The highest rank ``name`` reached while active here: (sequence, signed time in
        microseconds, the sha256 that reached it), or None."""
        row = self._conn.execute(
            "SELECT sequence, micros, sha256 FROM name_floor WHERE name = ?", (name,)
        ).fetchone()
        return (int(row[0]), int(row[1]), str(row[2])) if row else None

    def raise_name_floor(
        self, conn: sqlite3.Connection, name: str, sequence: int, micros: int, sha256: str
    ) -> None:
        """Remember that ``name`` reached this rank (call inside transaction()); a lower or equal
        rank leaves the row as it is, so the floor only ever rises."""
        conn.execute(
            "INSERT INTO name_floor (name, sequence, micros, sha256) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET sequence = excluded.sequence, "
            "micros = excluded.micros, sha256 = excluded.sha256 "
            "WHERE (excluded.sequence, excluded.micros) > (name_floor.sequence, name_floor.micros)",
            (name, sequence, micros, sha256),
        )

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
