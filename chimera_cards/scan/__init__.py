"""Scanning a card or bundle for problems: shape lint, the hidden-instruction scan, code scan.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
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
    from chimera_cards.scan.pyscan import scan_python
    from chimera_cards.scan.pystatements import TopLevel, first_line, parse_spanning, top_level
    from chimera_cards.scan.textruns import RunGate

# public name -> the module that defines it
_EXPORTS = {
    "BundleScan": "chimera_cards.scan.codescan",
    "CODE_RULES": "chimera_cards.scan.codescan",
    "DEFAULT_PROFILE": "chimera_cards.scan.findings",
    "FileReport": "chimera_cards.scan.codescan",
    "Finding": "chimera_cards.scan.findings",
    "LintReport": "chimera_cards.scan.lint",
    "MAX_FINDINGS_PER_RULE": "chimera_cards.scan.findings",
    "PROFILES": "chimera_cards.scan.findings",
    "RULES": "chimera_cards.scan.findings",
    "RunGate": "chimera_cards.scan.textruns",
    "ScanCache": "chimera_cards.scan.codescan",
    "TopLevel": "chimera_cards.scan.pystatements",
    "UnknownProfileError": "chimera_cards.scan.findings",
    "VOCABULARIES": "chimera_cards.scan.findings",
    "binary_type": "chimera_cards.scan.codescan",
    "classify": "chimera_cards.scan.codescan",
    "finding_id": "chimera_cards.scan.codescan",
    "first_line": "chimera_cards.scan.pystatements",
    "has_errors": "chimera_cards.scan.findings",
    "is_markdown_path": "chimera_cards.scan.lint",
    "lint_bundle": "chimera_cards.scan.codescan",
    "lint_card": "chimera_cards.scan.lint",
    "lint_paths": "chimera_cards.scan.lint",
    "lint_skill_paths": "chimera_cards.scan.codescan",
    "lint_text": "chimera_cards.scan.lint",
    "parse_spanning": "chimera_cards.scan.pystatements",
    "resolve_profile": "chimera_cards.scan.lint",
    "reveal": "chimera_cards.scan.hidden",
    "scan_bundle": "chimera_cards.scan.codescan",
    "scan_hidden": "chimera_cards.scan.hidden",
    "scan_python": "chimera_cards.scan.pyscan",
    "scan_script": "chimera_cards.scan.codescan",
    "scan_shell": "chimera_cards.scan.codescan",
    "top_level": "chimera_cards.scan.pystatements",
}

__all__ = [
    "CODE_RULES",
    "DEFAULT_PROFILE",
    "MAX_FINDINGS_PER_RULE",
    "PROFILES",
    "RULES",
    "VOCABULARIES",
    "BundleScan",
    "FileReport",
    "Finding",
    "LintReport",
    "RunGate",
    "ScanCache",
    "TopLevel",
    "UnknownProfileError",
    "binary_type",
    "classify",
    "finding_id",
    "first_line",
    "has_errors",
    "is_markdown_path",
    "lint_bundle",
    "lint_card",
    "lint_paths",
    "lint_skill_paths",
    "lint_text",
    "parse_spanning",
    "resolve_profile",
    "reveal",
    "scan_bundle",
    "scan_hidden",
    "scan_python",
    "scan_script",
    "scan_shell",
    "top_level",
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
