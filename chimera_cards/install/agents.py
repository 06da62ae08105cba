"""Where each coding agent reads skill folders: one data table, and the rules that resolve it.

Agents do not ask for skills; they read ``<folder>/<name>/SKILL.md`` from fixed places, one inside
the project and one for the user. ``AGENTS`` is the only place those places are written down. A
user folder lives under the agent's own home, which the agent lets you move with an environment
variable (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ...) or which sits in the XDG config home; the
resolver honours both, and reads the environment from an argument so tests can use a fake HOME.

The folders and detection rules follow the `skills` installer (vercel-labs/skills,
``src/agents.ts``), so a skill installed here lands where that tool would put it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from chimera_cards.errors import UsageError

__all__ = [
    "AGENTS",
    "Agent",
    "AgentLocation",
    "UnknownAgentError",
    "agent_locations",
    "detect",
    "find_agent",
    "project_dir",
    "user_dir",
]


class UnknownAgentError(UsageError):
    """``--agent`` named an agent that is not in the table (exit 2)."""


@dataclass(frozen=True)
class Agent:
    """One agent's skill folders.

    Paths are templates: ``~`` is ``$HOME``, ``$CONFIG`` is ``$XDG_CONFIG_HOME`` (else
    ``~/.config``), ``$HOME_DIR`` is the agent's own home: the value of ``home_var`` when it is set
    and not blank, else ``home``.
    """

    name: str
    display: str
    project: str  # relative to the project root
    user: str | None  # None: the agent has no user-wide folder
    detect: tuple[str, ...]  # any of these existing means the agent is on this machine
    home: str | None = None  # the agent's own home folder, when it has one
    home_var: str | None = None  # the environment variable that moves it
    aliases: tuple[str, ...] = ()


def _a(name, display, project, user, detect, home=None, home_var=None, aliases=()) -> Agent:
    return Agent(name, display, project, user, tuple(detect), home, home_var, tuple(aliases))


# The generic `.agents/skills` folder is read by many agents at once (Codex, Cursor, Gemini CLI,
# Copilot, OpenCode, ...), so installing there once serves all of them.
AGENTS: tuple[Agent, ...] = (
    _a("universal", "Any agent (.agents/skills)", ".agents/skills", "$CONFIG/agents/skills", (),
       aliases=("agents", "generic")),
    _a("claude-code", "Claude Code", ".claude/skills", "$HOME_DIR/skills", ("$HOME_DIR",),
       home="~/.claude", home_var="CLAUDE_CONFIG_DIR", aliases=("claude",)),
    _a("codex", "Codex", ".agents/skills", "$HOME_DIR/skills", ("$HOME_DIR", "/etc/codex"),
       home="~/.codex", home_var="CODEX_HOME"),
    _a("cursor", "Cursor", ".agents/skills", "~/.cursor/skills", ("~/.cursor",)),
    _a("gemini-cli", "Gemini CLI", ".agents/skills", "~/.gemini/skills", ("~/.gemini",),
       aliases=("gemini",)),
    _a("github-copilot", "GitHub Copilot", ".agents/skills", "~/.copilot/skills", ("~/.copilot",),
       aliases=("copilot",)),
    _a("goose", "Goose", ".goose/skills", "$CONFIG/goose/skills", ("$CONFIG/goose",)),
    _a("opencode", "OpenCode", ".agents/skills", "$CONFIG/opencode/skills", ("$CONFIG/opencode",)),
    _a("amp", "Amp", ".agents/skills", "$CONFIG/agents/skills", ("$CONFIG/amp",)),
    _a("augment", "Augment", ".augment/skills", "~/.augment/skills", ("~/.augment",)),
    _a("cline", "Cline", ".agents/skills", "~/.agents/skills", ("~/.cline",)),
    _a("continue", "Continue", ".continue/skills", "~/.continue/skills", ("~/.continue",)),
    _a("crush", "Crush", ".crush/skills", "~/.config/crush/skills", ("~/.config/crush",)),
    _a("droid", "Droid", ".agents/skills", "~/.factory/skills", ("~/.factory",)),
    _a("grok", "Grok Build", ".grok/skills", "$HOME_DIR/skills", ("$HOME_DIR",),
       home="~/.grok", home_var="GROK_HOME"),
    _a("hermes-agent", "Hermes Agent", ".hermes/skills", "$HOME_DIR/skills", ("$HOME_DIR",),
       home="~/.hermes", home_var="HERMES_HOME"),
    _a("junie", "Junie", ".junie/skills", "~/.junie/skills", ("~/.junie",)),
    _a("kilo", "Kilo Code", ".agents/skills", "~/.kilo/skills", ("~/.kilo", "~/.kilocode")),
    _a("kiro-cli", "Kiro CLI", ".kiro/skills", "~/.kiro/skills", ("~/.kiro",)),
    _a("mistral-vibe", "Mistral Vibe", ".vibe/skills", "$HOME_DIR/skills", ("$HOME_DIR",),
       home="~/.vibe", home_var="VIBE_HOME"),
    _a("openhands", "OpenHands", ".openhands/skills", "~/.openhands/skills", ("~/.openhands",)),
    _a("pi", "Pi", ".pi/skills", "~/.pi/agent/skills", ("~/.pi/agent",)),
    _a("qwen-code", "Qwen Code", ".qwen/skills", "~/.qwen/skills", ("~/.qwen",)),
    _a("roo", "Roo Code", ".roo/skills", "~/.roo/skills", ("~/.roo",)),
    _a("trae", "Trae", ".trae/skills", "~/.trae/skills", ("~/.trae",)),
    _a("warp", "Warp", ".agents/skills", "~/.agents/skills", ("~/.warp",)),
    _a("windsurf", "Windsurf", ".windsurf/skills", "~/.codeium/windsurf/skills",
       ("~/.codeium/windsurf",)),
    _a("zed", "Zed", ".agents/skills", "~/.agents/skills", ("$CONFIG/zed",)),
)  # fmt: skip


@dataclass(frozen=True)
class AgentLocation:
    """An agent resolved against one environment: what ``chimera-cards agents`` lists."""

    name: str
    display: str
    project: str
    user: str | None
    detected: bool
    aliases: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "display": self.display,
            "project": self.project,
            "user": self.user,
            "detected": self.detected,
            "aliases": list(self.aliases),
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


def _home(env: Mapping[str, str]) -> Path:
    value = env.get("HOME", "").strip()
    return Path(value) if value else Path.home()


def _config_home(env: Mapping[str, str]) -> Path:
    # XDG says a relative XDG_CONFIG_HOME is invalid and must be ignored.
    value = env.get("XDG_CONFIG_HOME", "").strip()
    return Path(value) if value and os.path.isabs(value) else _home(env) / ".config"


def _expand(template: str, agent: Agent, env: Mapping[str, str]) -> Path:
    if template.startswith("$HOME_DIR"):
        own = env.get(agent.home_var, "").strip() if agent.home_var else ""
        base = Path(own) if own else _expand(agent.home or "~", agent, env)
        return base / template[len("$HOME_DIR") :].lstrip("/")
    if template.startswith("$CONFIG"):
        return _config_home(env) / template[len("$CONFIG") :].lstrip("/")
    if template == "~" or template.startswith("~/"):
        return _home(env) / template[2:]
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
    if agent.user is None:
        raise UsageError(f"{agent.name} has no user-wide skill folder; use the project folder")
    return _expand(agent.user, agent, os.environ if env is None else env)


def detect(agent: Agent, env: Mapping[str, str] | None = None) -> bool:
    """Whether the agent looks installed here: any of its marker folders exists.

    Args:
        agent: from ``find_agent``.
        env: the environment to read (default ``os.environ``).

    Returns:
        True when a marker exists.
    """
    env = os.environ if env is None else env
    return any(_expand(marker, agent, env).exists() for marker in agent.detect)


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
            detected=detect(agent, env),
            aliases=agent.aliases,
        )
        for agent in AGENTS
    ]
