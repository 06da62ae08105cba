"""Moved to ``chimera_cards.bundles.folderscan``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.bundles.folderscan import (
    IGNORED_NAMES,
    RECEIPT_NAME,
    SIDECAR_FILES,
    SKILL_FILE,
    FileRecord,
    FolderRecord,
    Scan,
    find_skill_folders,
    hash_folder,
    idle_core,
    read_receipt_bytes,
    start_scan,
)

__all__ = [
    "IGNORED_NAMES",
    "RECEIPT_NAME",
    "SIDECAR_FILES",
    "SKILL_FILE",
    "FileRecord",
    "FolderRecord",
    "Scan",
    "find_skill_folders",
    "hash_folder",
    "idle_core",
    "read_receipt_bytes",
    "start_scan",
]
