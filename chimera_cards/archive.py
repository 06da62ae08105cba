"""Moved to ``chimera_cards.sources.archive``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.sources.archive import (
    ARCHIVE_SUFFIXES,
    MAX_ARCHIVE_BYTES,
    MAX_ARCHIVE_MEMBERS,
    MAX_RATIO,
    ArchiveError,
    ArchiveTree,
    archive_kind,
    read_archive,
    read_archive_file,
)

__all__ = [
    "ARCHIVE_SUFFIXES",
    "MAX_ARCHIVE_BYTES",
    "MAX_ARCHIVE_MEMBERS",
    "MAX_RATIO",
    "ArchiveError",
    "ArchiveTree",
    "archive_kind",
    "read_archive",
    "read_archive_file",
]
