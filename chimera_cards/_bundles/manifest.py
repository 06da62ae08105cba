"""A bundle's manifest: one record per file, the canonical manifest bytes and the digest.

Apart from ``bundle`` (reading and checking a folder or a tree) so that what only compares
digests — the store, an install receipt, ``check`` — loads no more than this.
"""

from __future__ import annotations

from collections.abc import Iterable

from chimera_cards._bundles.folderscan import manifest_line
from chimera_cards._util.integrity import sha256_of
from chimera_cards._util.records import record


@record(frozen=True)
class BundleFile:
    """One file of a bundle, as its manifest line says it."""

    path: str  # relative POSIX path inside the skill folder, e.g. "scripts/extract.py"
    executable: bool  # the only mode bit kept (as git does)
    size: int
    sha256: str  # hex

    def manifest_line(self) -> bytes:
        return manifest_line(self.path, self.executable, self.size, self.sha256)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "executable": self.executable,
            "size": self.size,
            "sha256": self.sha256,
        }


def _sort_key(f: BundleFile) -> bytes:
    return f.path.encode("utf-8")


def manifest_bytes(files: Iterable[BundleFile]) -> bytes:
    """The canonical manifest: one ``MODE SIZE SHA256 PATH`` line per file, sorted by path bytes.

    Args:
        files: the bundle's files, in any order.
    Returns:
        The exact bytes the bundle digest is taken over (see docs/bundles.md).
    """
    return b"".join(f.manifest_line() for f in sorted(files, key=_sort_key))


def bundle_digest(files: Iterable[BundleFile]) -> str:
    """SHA-256 hex of ``manifest_bytes(files)``.

    Args:
        files: the bundle's files, in any order.
    Returns:
        The bundle digest, 64 lowercase hex digits.
    """
    return sha256_of(manifest_bytes(files)).hexdigest()
