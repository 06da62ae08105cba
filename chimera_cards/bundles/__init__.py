"""A skill as a bundle of files: reading a folder, the manifest and where a bundle is hashed.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from chimera_cards.bundles.bundle import (
        IGNORED_NAMES,
        MAX_DEPTH,
        MAX_FILE_BYTES,
        MAX_FILES,
        MAX_TOTAL_BYTES,
        SIDECAR_FILES,
        SKILL_FILE,
        Bundle,
        BundleDiff,
        BundleError,
        BundleFile,
        BundleLimitError,
        FoundSkill,
        LinkError,
        MissingSkillError,
        SpecialFileError,
        UnsafePathError,
        bundle_digest,
        bundle_from_files,
        bundles_from_tree,
        check_path,
        diff_bundles,
        find_bundle_dirs,
        is_ignored,
        manifest_bytes,
        read_bundle_dir,
        skill_roots,
        split_tree,
    )
    from chimera_cards.bundles.folderscan import (
        RECEIPT_NAME,
        FileRecord,
        FolderRecord,
        Scan,
        find_skill_folders,
        hash_folder,
        idle_core,
        read_receipt_bytes,
        start_scan,
    )

# public name -> the module that defines it
_EXPORTS = {
    "Bundle": "chimera_cards.bundles.bundle",
    "BundleDiff": "chimera_cards.bundles.bundle",
    "BundleError": "chimera_cards.bundles.bundle",
    "BundleFile": "chimera_cards.bundles.bundle",
    "BundleLimitError": "chimera_cards.bundles.bundle",
    "FileRecord": "chimera_cards.bundles.folderscan",
    "FolderRecord": "chimera_cards.bundles.folderscan",
    "FoundSkill": "chimera_cards.bundles.bundle",
    "IGNORED_NAMES": "chimera_cards.bundles.bundle",
    "LinkError": "chimera_cards.bundles.bundle",
    "MAX_DEPTH": "chimera_cards.bundles.bundle",
    "MAX_FILES": "chimera_cards.bundles.bundle",
    "MAX_FILE_BYTES": "chimera_cards.bundles.bundle",
    "MAX_TOTAL_BYTES": "chimera_cards.bundles.bundle",
    "MissingSkillError": "chimera_cards.bundles.bundle",
    "RECEIPT_NAME": "chimera_cards.bundles.folderscan",
    "SIDECAR_FILES": "chimera_cards.bundles.bundle",
    "SKILL_FILE": "chimera_cards.bundles.bundle",
    "Scan": "chimera_cards.bundles.folderscan",
    "SpecialFileError": "chimera_cards.bundles.bundle",
    "UnsafePathError": "chimera_cards.bundles.bundle",
    "bundle_digest": "chimera_cards.bundles.bundle",
    "bundle_from_files": "chimera_cards.bundles.bundle",
    "bundles_from_tree": "chimera_cards.bundles.bundle",
    "check_path": "chimera_cards.bundles.bundle",
    "diff_bundles": "chimera_cards.bundles.bundle",
    "find_bundle_dirs": "chimera_cards.bundles.bundle",
    "find_skill_folders": "chimera_cards.bundles.folderscan",
    "hash_folder": "chimera_cards.bundles.folderscan",
    "idle_core": "chimera_cards.bundles.folderscan",
    "is_ignored": "chimera_cards.bundles.bundle",
    "manifest_bytes": "chimera_cards.bundles.bundle",
    "read_bundle_dir": "chimera_cards.bundles.bundle",
    "read_receipt_bytes": "chimera_cards.bundles.folderscan",
    "skill_roots": "chimera_cards.bundles.bundle",
    "split_tree": "chimera_cards.bundles.bundle",
    "start_scan": "chimera_cards.bundles.folderscan",
}

__all__ = [
    "IGNORED_NAMES",
    "MAX_DEPTH",
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "MAX_TOTAL_BYTES",
    "RECEIPT_NAME",
    "SIDECAR_FILES",
    "SKILL_FILE",
    "Bundle",
    "BundleDiff",
    "BundleError",
    "BundleFile",
    "BundleLimitError",
    "FileRecord",
    "FolderRecord",
    "FoundSkill",
    "LinkError",
    "MissingSkillError",
    "Scan",
    "SpecialFileError",
    "UnsafePathError",
    "bundle_digest",
    "bundle_from_files",
    "bundles_from_tree",
    "check_path",
    "diff_bundles",
    "find_bundle_dirs",
    "find_skill_folders",
    "hash_folder",
    "idle_core",
    "is_ignored",
    "manifest_bytes",
    "read_bundle_dir",
    "read_receipt_bytes",
    "skill_roots",
    "split_tree",
    "start_scan",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
