"""Blobs and bundles: exact bytes content-addressed by SHA-256, and each bundle's file rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence

from chimera_cards._bundles.folderscan import SKILL_FILE
from chimera_cards._bundles.manifest import BundleFile, bundle_digest
from chimera_cards._store.audit import AuditMixin
from chimera_cards._store.connection import _id_chunks
from chimera_cards._store.rows import Version
from chimera_cards._util.integrity import sha256_of
from chimera_cards.errors import (
    TamperedBlobError,
    UnknownVersionError,
)

TYPE_CHECKING = False  # typing is not imported at run time: check starts up on the store
if TYPE_CHECKING:
    from chimera_cards._bundles.bundle import Bundle


def _tampered_file(label: str, path: str) -> TamperedBlobError:
    return TamperedBlobError(
        f"{label}: stored bytes of {path} are missing or do not match their hash; "
        "run `chimera-cards verify`"
    )


class BlobsMixin(AuditMixin):
    """Blobs and bundle file rows."""

    # Defined by VersionsMixin, which builds on this class (get_bundle accepts a version's id).
    version_by_id: Callable[[int], Version | None]

    # -- writing (call inside transaction()) -------------------------------------------------

    def put_blob(self, conn: sqlite3.Connection, data: bytes, sha256: str | None = None) -> str:
        """Store ``data`` under its SHA-256 (no-op if present) and return the hex digest.
        ``sha256``: that digest, when the caller has just computed it from these bytes."""
        sha = sha256_of(data).hexdigest() if sha256 is None else sha256
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
        from chimera_cards._bundles.bundle import bundle_from_files

        return self.put_bundle(conn, bundle_from_files({"SKILL.md": (data, False)})), sha256

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
        files = [_file_row(p, x, size, sha) for p, x, size, sha in rows]
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
        # Reading a bundle out loads the folder reader; a store that only compares digests not.
        from chimera_cards._bundles.bundle import bundle_from_files

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
        if data is None or sha256_of(data).hexdigest() != version.skill_sha256:
            raise TamperedBlobError(
                f"{version.name} {version.sha256[:12]}: stored SKILL.md bytes are missing or do "
                "not match their hash; run `chimera-cards verify`"
            )
        return data

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
                out.setdefault(digest, []).append(_file_row(path, executable, size, sha))
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

    def adopted_folders(self) -> dict[str, set[str]]:
        """folder -> the bundle digests ``adopt`` took from it: the installed copies this store
        knows are copies (a change to one is a local edit, never a new version to trust)."""
        out: dict[str, set[str]] = {}
        try:
            rows = self._conn.execute(
                "SELECT json_extract(source, '$.path'), digest FROM versions "
                "WHERE json_valid(source) "
                "AND json_extract(source, '$.recorded.kind') = 'npx-adopt'"
            ).fetchall()
        except sqlite3.Error:  # a hand-edited column: no folder is known then
            return out
        for path, digest in rows:
            if isinstance(path, str) and isinstance(digest, str):
                out.setdefault(path, set()).add(digest)
        return out

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


def _file_row(path: object, executable: object, size: object, sha: object) -> BundleFile:
    """A ``bundle_files`` row as a BundleFile, whatever a hand edit left in its columns: a value
    of the wrong type is read as text (or size -1), so the manifest no longer hashes to the
    digest and the bundle is refused as tampered, not a crash."""

    def text(value: object) -> str:
        if type(value) is str:
            return value
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        return str(value)

    number = size if type(size) is int else -1
    return BundleFile(text(path), bool(executable), number, text(sha))
