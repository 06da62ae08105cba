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
    "Card": "chimera_cards.cards.card",
    "parse_card": "chimera_cards.cards.card",
    "read_card_bytes": "chimera_cards.cards.card",
    "find_card_files": "chimera_cards.cards.card",
    "Finding": "chimera_cards.scan.findings",
    "LintReport": "chimera_cards.scan.lint",
    "lint_card": "chimera_cards.scan.lint",
    "lint_paths": "chimera_cards.scan.lint",
    "sha256_hex": "chimera_cards.util.integrity",
    "sri": "chimera_cards.util.integrity",
    "Store": "chimera_cards.store.facade",
    "default_store_path": "chimera_cards.store.connection",
    "export_card": "chimera_cards.retrieve.export",
    "verify_store": "chimera_cards.store.verify",
    "ImportResult": "chimera_cards.importer.pipeline",
    "import_source": "chimera_cards.importer.pipeline",
    "FetchError": "chimera_cards.sources.fetch",
    "fetch_url": "chimera_cards.sources.fetch",
    "read_lockfile": "chimera_cards.importer.lockfile",
    "write_lockfile": "chimera_cards.importer.lockfile",
    "generate_key": "chimera_cards.trust.keys",
    "load_private_key": "chimera_cards.trust.keys",
    "approve": "chimera_cards.review.decisions",
    "reject": "chimera_cards.review.decisions",
    "retire": "chimera_cards.review.decisions",
    "review_queue": "chimera_cards.review.view",
    "review_view": "chimera_cards.review.view",
    "match": "chimera_cards.retrieve.matching",
    "match_path": "chimera_cards.retrieve.matching",
    "render_for_prompt": "chimera_cards.retrieve.render",
}

# The same names as _EXPORTS, spelled out for tools that read __all__ without running it.
__all__ = [
    "Card",
    "ChimeraError",
    "FetchError",
    "Finding",
    "ImportResult",
    "LintReport",
    "Store",
    "UsageError",
    "__version__",
    "approve",
    "default_store_path",
    "export_card",
    "fetch_url",
    "find_card_files",
    "generate_key",
    "import_source",
    "lint_card",
    "lint_paths",
    "load_private_key",
    "match",
    "match_path",
    "parse_card",
    "read_card_bytes",
    "read_lockfile",
    "reject",
    "render_for_prompt",
    "retire",
    "review_queue",
    "review_view",
    "sha256_hex",
    "sri",
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
