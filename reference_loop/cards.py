"""Moved to ``reference_loop.core.cards``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.core.cards import (
    CARDS_IN,
    DEFAULT_CARDS_IN,
    DEFAULT_K,
    HEADING,
    PREAMBLE,
    CardsBlock,
    cards_for_attempt,
    cards_from_options,
    cards_section,
    check_cards_in,
    describe,
    load_cards,
    review_label,
)

__all__ = [
    "CARDS_IN",
    "DEFAULT_CARDS_IN",
    "DEFAULT_K",
    "HEADING",
    "PREAMBLE",
    "CardsBlock",
    "cards_for_attempt",
    "cards_from_options",
    "cards_section",
    "check_cards_in",
    "describe",
    "load_cards",
    "review_label",
]
