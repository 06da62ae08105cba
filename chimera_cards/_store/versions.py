"""Card versions: one row per (name, bytes) with source, provenance, status and lint findings."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence

from chimera_cards._store.audit import canonical_json
from chimera_cards._store.blobs import BlobsMixin
from chimera_cards._store.connection import _ID_CHUNK, utc_now
from chimera_cards._store.rows import (
    _VERSION_COLUMNS,
    _VERSION_COLUMNS_BARE,
    PROVENANCES,
    STATUSES,
    SUPERSEDED,
    Version,
    _checked_version,
)
from chimera_cards._util.integrity import is_hex
from chimera_cards.errors import (
    UnknownVersionError,
    UnstorableNameError,
    UsageError,
)

_BAD_NAME_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs")


def _bad_chars(name: str) -> bool:
    """Whether ``name`` holds whitespace, a control or an invisible character (the Unicode
    tables load only for a name that is not plain ASCII: ``check`` opens the store)."""
    import unicodedata

    return any(unicodedata.category(ch) in _BAD_NAME_CATEGORIES for ch in name)


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
        or (not (name.isascii() and name.isprintable() and " " not in name) and _bad_chars(name))
    ):
        raise UnstorableNameError(
            f"card name {name!r} cannot be stored (whitespace, path separators, "
            "control or invisible characters)"
        )
    return name


class VersionsMixin(BlobsMixin):
    """Version rows and their status."""

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
        findings_text = canonical_json(list(findings)) if findings_json is None else findings_json
        source_text = canonical_json(source or {})
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
                findings_text,
                digest,
                skill_sha,
                source_text,
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
                # What the row holds besides: ``verify`` finds any of it edited by hand.
                "row": row_digest(findings_text, digest, skill_sha, source_text),
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


def row_digest(findings: object, digest: object, skill_sha256: object, source: object) -> str:
    """SHA-256 of a version row's columns no later event changes, as stored (an import's audit
    entry records it; ``verify`` compares). Not the import time: two imports of the same bytes
    record the same row whenever they ran."""
    import hashlib

    parts = [findings, digest, skill_sha256, source]
    text = json.dumps([p if isinstance(p, str) else repr(p) for p in parts], ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()
