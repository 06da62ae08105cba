"""Telling a URL from a local path, with no network imports (``match`` starts up on this).

One definition for the whole package: the importer uses it to decide what to fetch, and the gate
uses it to decide whether a card came from a clean local path. It is deliberately loose — any
``scheme://`` counts — because for the gate the conservative answer is that anything with a scheme
is not a local path.
"""

from __future__ import annotations

# Seconds a fetch may take; here, not in fetch.py, so naming the default loads no network code.
DEFAULT_TIMEOUT = 10.0


def is_url(source: str | None) -> bool:
    """True when ``source`` names a URL (any scheme word followed by ``://``), not a local path.

    Args:
        source: a path, URL or recorded origin (None is not a URL).
    Returns:
        Whether it has the form ``scheme://...``.
    """
    if source is None:
        return False
    scheme, sep, _rest = str(source).partition("://")
    return bool(sep) and scheme.isascii() and scheme.replace("+", "").isalnum()
