"""The import hooks ``importer.IMPORT_HOOKS`` names, each a cheap test run for every stored card
that loads the module doing the work only for a card it concerns.

A folder import calls every hook once per card, and nearly no card ships approvals: testing for
them here keeps ``review`` (and cryptography behind it) out of an import that has none.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from chimera_cards.bundles.folderscan import APPROVALS_FILENAME
from chimera_cards.store.facade import Store
from chimera_cards.util.urls import is_url

__all__ = ["APPROVALS_FILENAME", "approvals"]


def approvals(store: Store, conn: sqlite3.Connection, candidate: Any, version: Any, new: bool):
    """Honour approvals shipped with a card (``review.import_hook``), when it has any.

    Args:
        store, conn: the store and its write transaction.
        candidate: the importer's Candidate (its ``approvals`` bytes or its ``file``).
        version: the stored Version.
        new: whether this import stored it.
    Returns:
        The updated Version, or None when nothing changed.
    """
    if getattr(candidate, "approvals", None) is None:
        file = getattr(candidate, "file", None)
        if file is None or is_url(version.origin):
            return None
        # os.path, not pathlib: this runs for every card, and nearly always finds nothing.
        if not os.path.isfile(os.path.join(os.path.dirname(file), APPROVALS_FILENAME)):
            return None
    from chimera_cards.review.statements import import_hook

    return import_hook(store, conn, candidate, version, new)
