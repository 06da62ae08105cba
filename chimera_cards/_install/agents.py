"""Where each coding agent reads skill folders: one data file, and the rules that resolve it.

Agents do not ask for skills; they read ``<folder>/<name>/SKILL.md`` from fixed places, one inside
the project and one for the user. ``agents.json`` beside this module is the only place those
places are written down, one row per agent (a new agent is one row). A user folder lives under
the agent's own home, which the agent lets you move with an environment variable
(``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ...) or which sits in the XDG config home; the resolver
honours both, and reads the environment from an argument so tests can use a fake HOME.

The rows follow the ``skills`` installer (npx skills, vercel-labs/skills ``src/agents.ts``; the
version is the file's ``checked_against``), so a skill installed here lands where that tool would
put it and ``npx skills list`` sees it.

Path templates: ``~`` is ``$HOME``; ``$CONFIG`` is ``$XDG_CONFIG_HOME`` (else ``~/.config``);
``$HOME_DIR`` is the agent's own home (the value of ``home_var`` when set and not blank, else
``home``); ``${VAR}`` is that environment variable (the path is skipped when it is unset); ``./``
is the project root; anything else is absolute.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from chimera_cards.errors import UsageError

DATA_FILE = "agents.json"
ALL_DETECTED = "*"
# Where npx keeps its one copy when it links a skill into several agents' folders.
CANONICAL_PROJECT_DIR = ".agents/skills"
CANONICAL_USER_DIR = "~/.agents/skills"


class UnknownAgentError(UsageError):
    """``--agent`` named an agent that is not in the table (exit 2)."""


class NoAgentDetectedError(UsageError):
    """``--agent '*'`` on a machine where no agent is detected (exit 2)."""


@dataclass(frozen=True)
class Agent:
    """One agent's skill folders (templates: see the module docstring)."""

    name: str
    display: str
    project: str  # relative to the project root
    user: str | None  # None: the agent has no user-wide folder
    detect: tuple[str, ...]  # any of these existing means the agent is on this machine
    home: str | None = None  # the agent's own home folder, when it has one
    home_var: str | None = None  # the environment variable that moves it
    aliases: tuple[str, ...] = ()
    # (marker, folder): the first whose marker exists is the user folder instead of ``user``.
    user_if: tuple[tuple[str, str], ...] = ()
    # detected only when the project's package.json depends on this package as well
    detect_needs_dependency: str | None = None


def load_agents(text: str | None = None) -> tuple[tuple[Agent, ...], str]:
    """The agents table and what it was checked against.

    Args:
        text: the JSON (default: the packaged ``agents.json``).
    Returns:
        (agents in file order, the ``checked_against`` note).
    """
    if text is None:
        # Beside this module in every install this package supports (a plain open: agents'
        # hooks load this table on many tool calls, and importlib.resources costs more than
        # reading the file).
        with open(os.path.join(os.path.dirname(__file__), DATA_FILE), encoding="utf-8") as f:
            text = f.read()
    data = json.loads(text)
    agents = tuple(
        Agent(
            name=row["name"],
            display=row["display"],
            project=row["project"],
            user=row.get("user"),
            detect=tuple(row.get("detect", ())),
            home=row.get("home"),
            home_var=row.get("home_var"),
            aliases=tuple(row.get("aliases", ())),
            user_if=tuple((m, d) for m, d in row.get("user_if", ())),
            detect_needs_dependency=row.get("detect_needs_dependency"),
        )
        for row in data["agents"]
    )
    return agents, str(data.get("checked_against", ""))


AGENTS, CHECKED_AGAINST = load_agents()


@dataclass(frozen=True)
class AgentLocation:
    """An agent resolved against one environment: what ``chimera-cards agents`` lists."""

    name: str
    display: str
    project: str
    user: str | None
    detected: bool
    aliases: tuple[str, ...] = ()
    home_var: str | None = None

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "display": self.display,
            "project": self.project,
            "user": self.user,
            "detected": self.detected,
            "aliases": list(self.aliases),
            "home_var": self.home_var,
        }


def find_agent(name: str) -> Agent:
    """The agent called ``name`` (or one of its aliases), case-insensitively.

    Raises:
        UnknownAgentError: no such agent; the message lists the known names.
    """
    key = name.strip().lower()
    for agent in AGENTS:
        if key == agent.name or key in agent.aliases:
            return agent
    known = ", ".join(agent.name for agent in AGENTS)
    raise UnknownAgentError(f"unknown agent {name!r}; known agents: {known}")


def find_agents(
    names: Iterable[str],
    env: Mapping[str, str] | None = None,
    root: str | os.PathLike = ".",
) -> list[Agent]:
    """The agents ``--agent`` named, each once, in the order given; ``*`` is every agent
    detected here.

    Args:
        names: agent names or aliases, or ``*``.
        env: the environment detection reads (default ``os.environ``).
        root: the project root (some agents are detected by a folder in the project).
    Returns:
        The agents.
    Raises:
        UnknownAgentError: a name is not in the table.
        NoAgentDetectedError: ``*`` and nothing is detected.
    """
    chosen: dict[str, Agent] = {}
    for name in names:
        if name.strip() == ALL_DETECTED:
            found = [a for a in AGENTS if detect(a, env, root)]
            if not found:
                raise NoAgentDetectedError(
                    "--agent '*': no agent is detected here (see `chimera-cards agents`)"
                )
            for agent in found:
                chosen.setdefault(agent.name, agent)
        else:
            agent = find_agent(name)
            chosen.setdefault(agent.name, agent)
    return list(chosen.values())


def _home(env: Mapping[str, str]) -> Path:
    value = env.get("HOME", "").strip()
    return Path(value) if value else Path.home()


def _config_home(env: Mapping[str, str]) -> Path:
    # XDG says a relative XDG_CONFIG_HOME is invalid and must be ignored.
    value = env.get("XDG_CONFIG_HOME", "").strip()
    return Path(value) if value and os.path.isabs(value) else _home(env) / ".config"


def _expand(
    template: str, agent: Agent, env: Mapping[str, str], root: str | os.PathLike = "."
) -> Path | None:
    """The path a template names here, or None (it names an unset variable)."""
    if template.startswith("$HOME_DIR"):
        own = env.get(agent.home_var, "").strip() if agent.home_var else ""
        base = Path(own) if own else _expand(agent.home or "~", agent, env, root)
        if base is None:
            return None
        return base / template[len("$HOME_DIR") :].lstrip("/")
    if template.startswith("$CONFIG"):
        return _config_home(env) / template[len("$CONFIG") :].lstrip("/")
    if template.startswith("${"):
        var, _, rest = template[2:].partition("}")
        value = env.get(var, "").strip()
        return Path(value) / rest.lstrip("/") if value else None
    if template == "~" or template.startswith("~/"):
        return _home(env) / template[2:]
    if template.startswith("./"):
        return Path(root) / template[2:]
    return Path(template)


def project_dir(agent: Agent, root: str | os.PathLike = ".") -> Path:
    """The agent's skill folder inside the project at ``root``.

    Args:
        agent: from ``find_agent``.
        root: the project root (default: the current directory).

    Returns:
        ``root / agent.project``.
    """
    return Path(root) / agent.project


def user_dir(agent: Agent, env: Mapping[str, str] | None = None) -> Path:
    """The agent's user-wide skill folder, honouring its home variable and ``XDG_CONFIG_HOME``.

    Args:
        agent: from ``find_agent``.
        env: the environment to read (default ``os.environ``).

    Returns:
        The absolute folder.

    Raises:
        UsageError: the agent has no user-wide folder.
    """
    env = os.environ if env is None else env
    if agent.user is None:
        raise UsageError(f"{agent.name} has no user-wide skill folder; use the project folder")
    for marker, folder in agent.user_if:
        where = _expand(marker, agent, env)
        if where is not None and where.exists():
            found = _expand(folder, agent, env)
            if found is not None:
                return found
    found = _expand(agent.user, agent, env)
    if found is None:
        raise UsageError(f"{agent.name}: its user folder names an unset variable")
    return found


def _depends_on(root: str | os.PathLike, package: str) -> bool:
    try:
        data = json.loads((Path(root) / "package.json").read_bytes())
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict):
        return False
    return any(
        isinstance(data.get(k), dict) and package in data[k]
        for k in ("dependencies", "devDependencies")
    )


def detect(
    agent: Agent, env: Mapping[str, str] | None = None, root: str | os.PathLike = "."
) -> bool:
    """Whether the agent looks installed here: any of its marker folders exists.

    Args:
        agent: from ``find_agent``.
        env: the environment to read (default ``os.environ``).
        root: the project root, for markers inside the project.

    Returns:
        True when a marker exists.
    """
    env = os.environ if env is None else env
    for marker in agent.detect:
        where = _expand(marker, agent, env, root)
        if where is not None and where.exists():
            if agent.detect_needs_dependency and not _depends_on(
                root, agent.detect_needs_dependency
            ):
                continue
            return True
    return False


def agent_locations(
    env: Mapping[str, str] | None = None, root: str | os.PathLike = "."
) -> list[AgentLocation]:
    """Every agent in the table, resolved against ``env``, with whether it is detected.

    Args:
        env: the environment to read (default ``os.environ``).
        root: the project root for the project folders.

    Returns:
        One ``AgentLocation`` per agent, in table order.
    """
    env = os.environ if env is None else env
    return [
        AgentLocation(
            name=agent.name,
            display=agent.display,
            project=str(project_dir(agent, root)),
            user=str(user_dir(agent, env)) if agent.user else None,
            detected=detect(agent, env, root),
            aliases=agent.aliases,
            home_var=agent.home_var,
        )
        for agent in AGENTS
    ]
