"""``<available_skills>`` for every installed skill whose bytes ``check`` calls ok.

The block the Agent Skills reference validator prints (``agentskills to-prompt DIR...``), for the
same folders, byte for byte: name and description from SKILL.md's frontmatter, HTML-escaped; the
location is SKILL.md's resolved path (escaped too, which changes nothing for a path without
``&<>"'``). A folder that is modified, revoked, unknown or missing is left out and returned apart,
with its state, so the caller can say which.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from chimera_cards._bundles.bundle import SKILL_FILE
from chimera_cards._cards.card import CardParseError, parse_card
from chimera_cards._install.policy import Policy
from chimera_cards._install.verify import check


@dataclass(frozen=True)
class PromptSkill:
    """One ``<skill>`` of the block: an installed skill that check calls ok."""

    name: str
    description: str
    location: str  # SKILL.md, resolved

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class LeftOut:
    """An installed skill folder left out of the block, and its check state."""

    name: str
    path: str
    state: str
    detail: str

    def to_dict(self) -> dict:
        return asdict(self)


def available(
    store, directories: Iterable[str | os.PathLike], policy: Policy = Policy()
) -> tuple[list[PromptSkill], list[LeftOut]]:
    """The skills of ``directories`` an agent may be told about, and the ones left out.

    Args:
        store: an open Store.
        directories: skills folders (``.claude/skills``); their order is kept, and within one
            the folders are in name order (as ``check`` lists them).
        policy: whose approvals count.
    Returns:
        (skills check calls ok, in that order; every other folder with its state).
    """
    report = check(store, [Path(d) for d in directories], policy)
    shown: list[PromptSkill] = []
    left_out: list[LeftOut] = []
    for state in report.states:
        if not state.ok:
            left_out.append(LeftOut(state.name, state.path, state.state, state.detail))
            continue
        location = (Path(state.path) / SKILL_FILE).resolve()
        try:
            card = parse_card(location.read_bytes(), path=str(location))
        except (OSError, CardParseError) as exc:
            left_out.append(LeftOut(state.name, state.path, "unreadable", str(exc)))
            continue
        name = card.name if isinstance(card.name, str) else state.name
        description = card.description if isinstance(card.description, str) else ""
        shown.append(PromptSkill(name, description, str(location)))
    return shown, left_out


def render(skills: Iterable[PromptSkill]) -> str:
    """The ``<available_skills>`` block, laid out as ``agentskills to-prompt`` lays it out."""
    lines = ["<available_skills>"]
    for skill in skills:
        lines.append("<skill>")
        for tag, value in (
            ("name", skill.name),
            ("description", skill.description),
            ("location", skill.location),
        ):
            lines += [f"<{tag}>", html.escape(value), f"</{tag}>"]
        lines.append("</skill>")
    lines.append("</available_skills>")
    return "\n".join(lines)


def installed_states(
    store, directory: str | os.PathLike, names: Iterable[str], policy: Policy = Policy()
) -> dict[str, str]:
    """What ``check`` says of each name's folder in ``directory``: ``ok``, ``modified``,
    ``revoked``, ``unknown``, ``missing`` (recorded, folder gone) or ``not installed``.

    Args:
        store: an open Store.
        directory: the skills folder.
        names: skill names (a folder counts under its own name and its receipt's).
        policy: whose approvals count.
    Returns:
        name -> state, for every name given.
    """
    found: dict[str, str] = {}
    for state in check(store, [Path(directory)], policy).states:
        found.setdefault(Path(state.path).name, state.state)
        found.setdefault(state.name, state.state)
    return {name: found.get(name, "not installed") for name in names}
