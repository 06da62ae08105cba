"""Moved: split into ``chimera_cards.scan.findings``, ``.scan.hidden`` and ``.scan.lint``.

This path re-exports their public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.scan.findings import (
    DEFAULT_PROFILE,
    MAX_FINDINGS_PER_RULE,
    PROFILES,
    RULES,
    VOCABULARIES,
    Finding,
    UnknownProfileError,
    has_errors,
)
from chimera_cards.scan.hidden import reveal, scan_hidden
from chimera_cards.scan.lint import (
    LintReport,
    is_markdown_path,
    lint_card,
    lint_paths,
    lint_text,
    resolve_profile,
)

__all__ = [
    "DEFAULT_PROFILE",
    "MAX_FINDINGS_PER_RULE",
    "PROFILES",
    "RULES",
    "VOCABULARIES",
    "Finding",
    "LintReport",
    "UnknownProfileError",
    "has_errors",
    "is_markdown_path",
    "lint_card",
    "lint_paths",
    "lint_text",
    "resolve_profile",
    "reveal",
    "scan_hidden",
]
