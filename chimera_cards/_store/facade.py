"""``Store``: the one object callers hold, combining the table families over one connection."""

from __future__ import annotations

from chimera_cards._store.scanners import ScannersMixin


class Store(ScannersMixin):
    """An open card store. Use as a context manager or call ``close()``."""
