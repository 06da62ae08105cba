"""The one error type the CLI turns into a single stderr line and an exit code."""

from __future__ import annotations


class ChimeraError(Exception):
    """A problem with the user's input or environment, reported as one line, never a traceback.

    ``exit_code`` follows click's convention: 1 means "found a problem / refused", 2 means usage.
    """

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(ChimeraError):
    exit_code = 2
