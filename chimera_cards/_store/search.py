"""The full-text index over card names, descriptions and triggers, and its update queue."""

from __future__ import annotations

import itertools
import math
import sqlite3
from collections.abc import Iterator, Sequence

from chimera_cards._store.statements import StatementsMixin

_MAX_PAIRED_PHRASES = 6  # 15 pairs; longer queries are ranked in full
_BM25_K1 = 1.2  # SQLite FTS5's bm25() constant k1


class SearchMixin(StatementsMixin):
    """The search index and its queue."""

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
