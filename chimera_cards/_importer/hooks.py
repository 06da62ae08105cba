"""The import hooks ``importer.IMPORT_HOOKS`` names, each a cheap test run for every stored card
that loads the module doing the work only for a card it concerns.

A folder import calls every hook once per card, and nearly no card ships approvals: testing for
them here keeps ``review`` (and cryptography behind it) out of an import that has none.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from chimera_cards._bundles.folderscan import APPROVALS_FILENAME
from chimera_cards._store.facade import Store
from chimera_cards._util.urls import is_url


def approvals(store: Store, conn: sqlite3.Connection, candidate: Any, version: Any, new: bool):
    """Honour approvals shipped with a card (``review.import_hook``), when it has any; and
    hold a newly stored clean import that superseded the active version when the name's signed
    history says it is older (``review.supersession``), approvals or not.

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
        shipped = (
            file is not None
            and not is_url(version.origin)
            # os.path, not pathlib: this runs for every card, and nearly always finds nothing.
            and os.path.isfile(os.path.join(os.path.dirname(file), APPROVALS_FILENAME))
        )
        if not shipped:
            # A clean import becomes active at once; only one that replaced an active version
            # can have moved its name back.
            if not new or version.status != "active":
                return None
            if store.last_retired(version.name, reason=f"superseded by {version.sha256[:12]}"):
                from chimera_cards._review.statements import hold_older_import

                return hold_older_import(store, conn, version)
            return None
    from chimera_cards._review.statements import import_hook

    return import_hook(store, conn, candidate, version, new)
