"""Moved to ``chimera_cards.cards.card``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

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

__all__ = [
    "AGENT_SKILLS_KEYS",
    "BOM",
    "CARD_FILENAME",
    "CARD_SECTIONS",
    "CHIMERA_KEYS",
    "FENCE",
    "KNOWN_KEYS",
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
]
