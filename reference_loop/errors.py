"""The error types the reference-loop CLI turns into one stderr line and an exit code."""

from __future__ import annotations

from chimera_cards.errors import ChimeraError, UsageError

__all__ = ["LoopError", "LoopUsageError"]


class LoopError(ChimeraError):
    """Bad input or a missing tool (e.g. no ``git``): one clear line, never a traceback.

    A ChimeraError, so both commands report errors through the same one-line wrapper.
    """


class LoopUsageError(LoopError, UsageError):
    """A bad option, spec or task folder: the command was used wrongly (exit code 2)."""
