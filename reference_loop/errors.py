"""The error type the reference-loop CLI turns into one stderr line and an exit code."""

from __future__ import annotations


class LoopError(Exception):
    """Bad input or a missing tool (e.g. no ``git``): one clear line, never a traceback."""

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code
