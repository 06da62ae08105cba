"""The ``chimera-cards`` command: a thin click skin over the Python API.

``main`` is assembled on first use (``cli/app.py``), so importing a helper from this package —
``cli.common``, as ``reference-loop`` does — does not load every command and its dependencies.
"""

from __future__ import annotations


def __getattr__(name: str) -> object:
    if name == "main":
        from chimera_cards.cli.app import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
