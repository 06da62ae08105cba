"""Moved to ``reference_loop.core.planner``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.core.planner import Planner, ScriptedPlanner, make_planner

__all__ = [
    "Planner",
    "ScriptedPlanner",
    "make_planner",
]
