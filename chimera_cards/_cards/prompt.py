"""Progressive disclosure: how much of a card goes into a prompt.

Level 1 is the index an agent scans to decide whether a card applies (name, description,
triggers); level 2 adds the body it follows once it does. Rendering is plain text assembled from the
parsed card; escaping for a wrapper is retrieve's job (``retrieve.render_for_prompt``).
"""

from __future__ import annotations

from chimera_cards._cards.card import Card
from chimera_cards.errors import UsageError

LEVELS = (1, 2)


def render_card(card: Card, level: int) -> str:
    """Level 1: name, description, triggers. Level 2: level 1 plus the Markdown body."""
    if level not in LEVELS:
        raise UsageError(f"disclosure level must be 1 or 2, not {level!r}")
    lines = [f"name: {card.name or '(unnamed)'}"]
    description = " ".join((card.description or "").split())
    lines.append(f"description: {description}")
    triggers = card.triggers
    if triggers:
        lines.append("triggers:")
        lines.extend(f"- {' '.join(trigger.split())}" for trigger in triggers)
    text = "\n".join(lines)
    if level == 2:
        body = card.body.strip()
        if body:
            text += "\n\n" + body
    return text + "\n"
