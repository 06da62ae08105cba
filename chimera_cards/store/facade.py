"""``Store``: the one object callers hold, combining the table families over one connection."""

from __future__ import annotations

from chimera_cards.store.scanners import ScannersMixin

__all__ = ["Store"]


class Store(ScannersMixin):
    """An open card store. Use as a context manager or call ``close()``."""
