"""Moved to ``reference_loop.core.events``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.core.events import EVENT_KINDS, Event, EventLog

__all__ = [
    "EVENT_KINDS",
    "Event",
    "EventLog",
]
