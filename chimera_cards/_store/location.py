"""Where the store lives by default: the one definition of the chimera-cards home.

Apart from ``connection`` (which opens the file), so code that only needs the path — an agent's
hook, the key files' folder — does not load SQLite and the schema to learn it.
"""

from __future__ import annotations

import os
from pathlib import Path

from chimera_cards.errors import UsageError


def default_store_path() -> Path:
    """``$CHIMERA_CARDS_HOME/cards.db``, else ``$XDG_DATA_HOME/chimera-cards/cards.db``, else
    ``~/.local/share/chimera-cards/cards.db``."""
    home = os.environ.get("CHIMERA_CARDS_HOME")
    if home:
        return Path(home) / "cards.db"
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "chimera-cards" / "cards.db"


def existing_store_path(store_path: Path | None) -> Path:
    """``store_path`` (else the default store) when a store file is there; a command that only
    reads a store refuses rather than create an empty one."""
    path = store_path or default_store_path()
    if not path.is_file():
        raise UsageError(f"{path}: no store here (import a card first, or pass --store)")
    return path
