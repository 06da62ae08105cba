"""Moved to ``chimera_cards.sources.gitsource``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.sources.gitsource import (
    DEFAULT_GIT_TIMEOUT,
    GitError,
    GitSnapshot,
    is_git_source,
    read_git,
)

__all__ = [
    "DEFAULT_GIT_TIMEOUT",
    "GitError",
    "GitSnapshot",
    "is_git_source",
    "read_git",
]
