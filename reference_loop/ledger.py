"""Moved to ``reference_loop.core.ledger``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.core.ledger import CAUSES_HEADING, FACTS_HEADING, Cause, TaskLedger

__all__ = [
    "CAUSES_HEADING",
    "FACTS_HEADING",
    "Cause",
    "TaskLedger",
]
