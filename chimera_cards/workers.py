"""Moved to ``chimera_cards.util.workers``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.util.workers import WorkerError, parallel_map, usable_cpus

__all__ = [
    "WorkerError",
    "parallel_map",
    "usable_cpus",
]
