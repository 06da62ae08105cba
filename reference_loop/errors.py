"""The error type the reference-loop CLI turns into one stderr line and an exit code."""

from __future__ import annotations

from chimera_cards.errors import ChimeraError


class LoopError(ChimeraError):
    """Bad input or a missing tool (e.g. no ``git``): one clear line, never a traceback.

    A ChimeraError, so both commands report errors through the same one-line wrapper.
    """
