"""The card: parsing SKILL.md (frontmatter, sections) and rendering it for a prompt.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from chimera_cards.cards.card import (
        AGENT_SKILLS_KEYS,
        BOM,
        CARD_FILENAME,
        CARD_SECTIONS,
        CHIMERA_KEYS,
        FENCE,
        KNOWN_KEYS,
        LIBYAML,
        MAX_CARD_BYTES,
        MAX_FRONTMATTER_BYTES,
        MAX_FRONTMATTER_DEPTH,
        Card,
        CardParseError,
        CardReadError,
        Section,
        code_block_lines,
        find_card_files,
        load_card,
        parse_card,
        read_card_bytes,
    )
    from chimera_cards.cards.prompt import LEVELS, render_card

# public name -> the module that defines it
_EXPORTS = {
    "AGENT_SKILLS_KEYS": "chimera_cards.cards.card",
    "BOM": "chimera_cards.cards.card",
    "CARD_FILENAME": "chimera_cards.cards.card",
    "CARD_SECTIONS": "chimera_cards.cards.card",
    "CHIMERA_KEYS": "chimera_cards.cards.card",
    "Card": "chimera_cards.cards.card",
    "CardParseError": "chimera_cards.cards.card",
    "CardReadError": "chimera_cards.cards.card",
    "FENCE": "chimera_cards.cards.card",
    "KNOWN_KEYS": "chimera_cards.cards.card",
    "LEVELS": "chimera_cards.cards.prompt",
    "LIBYAML": "chimera_cards.cards.card",
    "MAX_CARD_BYTES": "chimera_cards.cards.card",
    "MAX_FRONTMATTER_BYTES": "chimera_cards.cards.card",
    "MAX_FRONTMATTER_DEPTH": "chimera_cards.cards.card",
    "Section": "chimera_cards.cards.card",
    "code_block_lines": "chimera_cards.cards.card",
    "find_card_files": "chimera_cards.cards.card",
    "load_card": "chimera_cards.cards.card",
    "parse_card": "chimera_cards.cards.card",
    "read_card_bytes": "chimera_cards.cards.card",
    "render_card": "chimera_cards.cards.prompt",
}

__all__ = [
    "AGENT_SKILLS_KEYS",
    "BOM",
    "CARD_FILENAME",
    "CARD_SECTIONS",
    "CHIMERA_KEYS",
    "FENCE",
    "KNOWN_KEYS",
    "LEVELS",
    "LIBYAML",
    "MAX_CARD_BYTES",
    "MAX_FRONTMATTER_BYTES",
    "MAX_FRONTMATTER_DEPTH",
    "Card",
    "CardParseError",
    "CardReadError",
    "Section",
    "code_block_lines",
    "find_card_files",
    "load_card",
    "parse_card",
    "read_card_bytes",
    "render_card",
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
