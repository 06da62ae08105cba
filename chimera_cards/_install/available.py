"""The skills an agent may use, listed (and rendered as ``<available_skills>``)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from chimera_cards._bundles.bundle import (
    SKILL_FILE,
)
from chimera_cards._install.verify import check

# -- for agents that take a system prompt ------------------------------------------------------


@dataclass(frozen=True)
class AvailableSkill:
    """An installed skill that ``check`` calls ok, as ``<available_skills>`` lists it."""

    name: str
    description: str
    location: str  # the installed SKILL.md, absolute

    def to_dict(self) -> dict:
        return asdict(self)


def available_skills(
    store, names: Iterable[str], directory: str | os.PathLike
) -> tuple[list[AvailableSkill], list[str]]:
    """The skills among ``names`` installed in ``directory`` with bytes ``check`` calls ok.

    An agent told about a skill reads its ``SKILL.md`` from the location given, so only a
    folder whose bytes are the approved bundle is offered.

    Args:
        store: an open Store.
        names: matched skill names, best first.
        directory: where they should be installed.
    Returns:
        (the installed skills in the order of ``names``, the names that are not installed ok).
    """
    from chimera_cards._cards.card import CardParseError, parse_card  # Markdown and YAML: only here

    directory = Path(directory)
    ok = {s.name: s for s in check(store, [directory]).states if s.ok}
    found, absent = [], []
    for name in names:
        state = ok.get(name)
        if state is None:
            absent.append(name)
            continue
        location = (Path(state.path) / SKILL_FILE).absolute()
        try:
            card = parse_card(location.read_bytes(), path=str(location))
        except (OSError, CardParseError):
            absent.append(name)
            continue
        description = card.description if isinstance(card.description, str) else ""
        found.append(AvailableSkill(name, description, str(location)))
    return found, absent


def render_skills_xml(skills: Iterable[AvailableSkill]) -> str:
    """The Agent Skills ``<available_skills>`` block, byte for byte as ``skills-ref to-prompt``
    prints it: name and description HTML-escaped (so a description cannot close an element),
    the location as the path reads. Only a ``<`` in a location is escaped too (the reference
    writes it raw), so no folder name can open an element either."""
    import html

    lines = ["<available_skills>"]
    for skill in skills:
        lines += [
            "<skill>",
            "<name>",
            html.escape(skill.name),
            "</name>",
            "<description>",
            html.escape(skill.description),
            "</description>",
            "<location>",
            skill.location.replace("<", "&lt;"),
            "</location>",
            "</skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)
