"""chimera_cards: SKILL.md skill cards treated like dependencies.

Parse, lint, hash, import into a store, review with signed statements, and retrieve only approved
cards. ``clean`` is conferred by a reviewer, never claimed by a file.

The names in ``__all__`` are the public API. They are loaded on first use, so ``import
chimera_cards`` (and so ``chimera-cards --help``) stays cheap: a module is imported only when
one of its names is asked for.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "ChimeraError": "chimera_cards.errors",
    "UsageError": "chimera_cards.errors",
    "Card": "chimera_cards._cards.card",
    "parse_card": "chimera_cards._cards.card",
    "read_card_bytes": "chimera_cards._cards.card",
    "find_card_files": "chimera_cards._cards.card",
    "Finding": "chimera_cards._scan.findings",
    "LintReport": "chimera_cards._scan.lint",
    "lint_card": "chimera_cards._scan.lint",
    "lint_paths": "chimera_cards._scan.lint",
    "sha256_hex": "chimera_cards._util.integrity",
    "sri": "chimera_cards._util.integrity",
    "Store": "chimera_cards._store.facade",
    "default_store_path": "chimera_cards._store.location",
    "export_card": "chimera_cards._retrieve.export",
    "verify_store": "chimera_cards._store.verify",
    "ImportResult": "chimera_cards._importer.pipeline",
    "import_source": "chimera_cards._importer.pipeline",
    "FetchError": "chimera_cards._sources.fetch",
    "fetch_url": "chimera_cards._sources.fetch",
    "read_lockfile": "chimera_cards._importer.lockfile",
    "write_lockfile": "chimera_cards._importer.lockfile",
    "generate_key": "chimera_cards._trust.keys",
    "load_private_key": "chimera_cards._trust.keys",
    "approve": "chimera_cards._review.decisions",
    "reject": "chimera_cards._review.decisions",
    "retire": "chimera_cards._review.decisions",
    "review_queue": "chimera_cards._review.view",
    "review_view": "chimera_cards._review.view",
    "match": "chimera_cards._retrieve.matching",
    "match_path": "chimera_cards._retrieve.matching",
    "render_for_prompt": "chimera_cards._retrieve.render",
    "read_bundle_dir": "chimera_cards._bundles.bundle",
    "bundle_from_files": "chimera_cards._bundles.bundle",
    "diff_bundles": "chimera_cards._bundles.bundle",
    "load_card": "chimera_cards._cards.card",
    "has_errors": "chimera_cards._scan.findings",
    "reveal": "chimera_cards._scan.hidden",
    "scan_hidden": "chimera_cards._scan.hidden",
    "lint_text": "chimera_cards._scan.lint",
    "render_card": "chimera_cards._cards.prompt",
    "find_agent": "chimera_cards._install.agents",
    "project_dir": "chimera_cards._install.agents",
    "user_dir": "chimera_cards._install.agents",
    "agent_locations": "chimera_cards._install.agents",
    "install": "chimera_cards._install.installer",
    "check": "chimera_cards._install.verify",
    "plan_sync": "chimera_cards._install.sync",
    "apply_sync": "chimera_cards._install.sync",
    "remove_skill": "chimera_cards._install.disk",
    "Policy": "chimera_cards._install.policy",
    "outdated": "chimera_cards._importer.update",
    "update": "chimera_cards._importer.update",
    "read_trust_file": "chimera_cards._review.trustfile",
    "apply_trust_file": "chimera_cards._review.trustfile",
    "read_public_key": "chimera_cards._trust.keys",
    "add_trust": "chimera_cards._review.decisions",
}

# The same names as _EXPORTS, spelled out for tools that read __all__ without running it.
__all__ = [
    "Card",
    "ChimeraError",
    "FetchError",
    "Finding",
    "ImportResult",
    "LintReport",
    "Policy",
    "Store",
    "UsageError",
    "__version__",
    "add_trust",
    "agent_locations",
    "apply_sync",
    "apply_trust_file",
    "approve",
    "bundle_from_files",
    "check",
    "default_store_path",
    "diff_bundles",
    "export_card",
    "fetch_url",
    "find_agent",
    "find_card_files",
    "generate_key",
    "has_errors",
    "import_source",
    "install",
    "lint_card",
    "lint_paths",
    "lint_text",
    "load_card",
    "load_private_key",
    "match",
    "match_path",
    "outdated",
    "parse_card",
    "plan_sync",
    "project_dir",
    "read_bundle_dir",
    "read_card_bytes",
    "read_lockfile",
    "read_public_key",
    "read_trust_file",
    "reject",
    "remove_skill",
    "render_card",
    "render_for_prompt",
    "retire",
    "reveal",
    "review_queue",
    "review_view",
    "scan_hidden",
    "sha256_hex",
    "sri",
    "update",
    "user_dir",
    "verify_store",
    "write_lockfile",
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
