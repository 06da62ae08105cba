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
    "Card": "chimera_cards.card",
    "parse_card": "chimera_cards.card",
    "read_card_bytes": "chimera_cards.card",
    "find_card_files": "chimera_cards.card",
    "Finding": "chimera_cards.lint",
    "LintReport": "chimera_cards.lint",
    "lint_card": "chimera_cards.lint",
    "lint_paths": "chimera_cards.lint",
    "sha256_hex": "chimera_cards.integrity",
    "sri": "chimera_cards.integrity",
    "Store": "chimera_cards.store",
    "default_store_path": "chimera_cards.store",
    "export_card": "chimera_cards.store",
    "verify_store": "chimera_cards.store",
    "ImportResult": "chimera_cards.importer",
    "import_source": "chimera_cards.importer",
    "FetchError": "chimera_cards.fetch",
    "fetch_url": "chimera_cards.fetch",
    "read_lockfile": "chimera_cards.lockfile",
    "write_lockfile": "chimera_cards.lockfile",
    "generate_key": "chimera_cards.keys",
    "load_private_key": "chimera_cards.keys",
    "approve": "chimera_cards.review",
    "reject": "chimera_cards.review",
    "retire": "chimera_cards.review",
    "review_queue": "chimera_cards.review",
    "review_view": "chimera_cards.review",
    "match": "chimera_cards.retrieve",
    "match_path": "chimera_cards.retrieve",
    "render_for_prompt": "chimera_cards.retrieve",
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
