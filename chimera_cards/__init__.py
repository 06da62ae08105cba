"""chimera_cards: SKILL.md skill cards treated like dependencies.

Parse, lint, hash, import into a store, review with signed statements, and retrieve only approved
cards. ``clean`` is conferred by a reviewer, never claimed by a file.
"""

__version__ = "0.1.0"
