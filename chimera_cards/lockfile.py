"""Moved to ``chimera_cards.importer.lockfile``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.importer.lockfile import (
    DIGEST_PREFIX,
    HEADER,
    LockfileError,
    Pins,
    check_pin,
    format_lockfile,
    parse_lockfile,
    read_lockfile,
    write_lockfile,
)

__all__ = [
    "DIGEST_PREFIX",
    "HEADER",
    "LockfileError",
    "Pins",
    "check_pin",
    "format_lockfile",
    "parse_lockfile",
    "read_lockfile",
    "write_lockfile",
]
