"""Moved to ``chimera_cards.install.agents``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.install.agents import (
    AGENTS,
    Agent,
    AgentLocation,
    UnknownAgentError,
    agent_locations,
    detect,
    find_agent,
    project_dir,
    user_dir,
)

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
