"""Moved to ``chimera_cards.sources.fetch``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.sources.fetch import (
    ALLOWED_SCHEMES,
    MAX_REDIRECTS,
    Fetched,
    FetchError,
    check_timeout,
    fetch_url,
)

__all__ = [
    "ALLOWED_SCHEMES",
    "MAX_REDIRECTS",
    "FetchError",
    "Fetched",
    "check_timeout",
    "fetch_url",
]
