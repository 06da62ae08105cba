"""Moved to ``reference_loop.process.stop``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.process.stop import (
    Stopped,
    child_pids,
    kill_child_processes,
    signals_raise_stopped,
)

__all__ = [
    "Stopped",
    "child_pids",
    "kill_child_processes",
    "signals_raise_stopped",
]
