"""What is installed where: every skill folder of every agent, project and user-wide, its state.

One row per skill folder. Many agents read the same folder (``.agents/skills`` serves Codex,
Cursor, Gemini CLI, …), so a row names every agent that reads it. The state is ``check``'s, so a
row is ``ok`` only when the folder's bytes are an approved bundle now.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from chimera_cards._bundles.bundle import SKILL_FILE
from chimera_cards._install.agents import agent_locations
from chimera_cards._install.policy import Policy
from chimera_cards._install.verify import check


@dataclass(frozen=True)
class InstalledSkill:
    """One skill folder as an agent finds it, and what ``check`` says of its bytes."""

    name: str
    path: str
    folder: str  # the skills folder it is in
    scope: str  # "project" or "global"
    agents: tuple[str, ...]
    version: str | None  # SKILL.md's ``version`` (or ``metadata.version``), when it says one
    digest: str | None  # of the folder's bytes now
    state: str
    detail: str

    def to_dict(self) -> dict:
        data = asdict(self)
        data["agents"] = list(self.agents)
        return data


def skills_folders(
    env: Mapping[str, str] | None = None, root: str | os.PathLike = "."
) -> list[tuple[Path, str, tuple[str, ...]]]:
    """Every existing skills folder of the agents table: (folder, scope, agents reading it).

    Args:
        env: the environment (default ``os.environ``).
        root: the project root.
    Returns:
        Project folders first, then user-wide ones, each once, in table order.
    """
    env = os.environ if env is None else env
    found: dict[tuple[Path, str], list[str]] = {}
    for location in agent_locations(env, root):
        for place, scope in ((location.project, "project"), (location.user, "global")):
            if place:
                found.setdefault((Path(place), scope), []).append(location.name)
    ordered = sorted(found.items(), key=lambda item: item[0][1] != "project")
    return [(path, scope, tuple(agents)) for (path, scope), agents in ordered if path.is_dir()]


def _version(folder: Path) -> str | None:
    from chimera_cards._cards.card import CardParseError, parse_card

    try:
        card = parse_card((folder / SKILL_FILE).read_bytes())
    except (OSError, CardParseError):
        return None
    meta = card.frontmatter if isinstance(card.frontmatter, dict) else {}
    value = meta.get("version")
    nested = meta.get("metadata")
    if value is None and isinstance(nested, dict):
        value = nested.get("version")
    return str(value) if isinstance(value, (str, int, float)) else None


def installed_skills(
    store,
    policy: Policy = Policy(),
    env: Mapping[str, str] | None = None,
    root: str | os.PathLike = ".",
) -> list[InstalledSkill]:
    """One row per skill folder in every agent's project and user-wide skills folder.

    Args:
        store: an open Store (the states are judged against it).
        policy: whose approvals count.
        env: the environment (default ``os.environ``).
        root: the project root.
    Returns:
        The rows: project folders first, then user-wide, each folder's skills by name.
    """
    rows: list[InstalledSkill] = []
    for directory, scope, agents in skills_folders(env, root):
        for state in check(store, [directory], policy).states:
            path = Path(state.path)
            rows.append(
                InstalledSkill(
                    name=state.name,
                    path=str(path),
                    folder=str(directory),
                    scope=scope,
                    agents=agents,
                    version=_version(path) if state.state != "missing" else None,
                    digest=state.digest,
                    state=state.state,
                    detail=state.detail,
                )
            )
    return rows
