"""Moved to ``chimera_cards.scan.codescan`` (the Python scan: ``chimera_cards.scan.pyscan``).

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.scan.codescan import (
    CODE_RULES,
    BundleScan,
    FileReport,
    ScanCache,
    binary_type,
    classify,
    finding_id,
    lint_bundle,
    lint_skill_paths,
    scan_bundle,
    scan_script,
    scan_shell,
)
from chimera_cards.scan.pyscan import scan_python

__all__ = [
    "CODE_RULES",
    "BundleScan",
    "FileReport",
    "ScanCache",
    "binary_type",
    "classify",
    "finding_id",
    "lint_bundle",
    "lint_skill_paths",
    "scan_bundle",
    "scan_python",
    "scan_script",
    "scan_shell",
]
