"""The error types the CLI turns into a single stderr line and an exit code.

Every refusal has its own class, so callers and tests can tell refusals apart by type rather than
by message text. ``exit_code`` follows click's convention: 1 means "found a problem / refused",
2 means usage or unreadable input; each class carries its own.
"""

from __future__ import annotations

__all__ = [
    "ChimeraError",
    "LintBlockedError",
    "RejectedError",
    "StatementError",
    "StatusChangeError",
    "StoreError",
    "StoreWriteError",
    "TamperedBlobError",
    "TrustConflictError",
    "UnapprovedExportError",
    "UnknownCardError",
    "UnknownVersionError",
    "UnstorableNameError",
    "UntrustedKeyError",
    "UsageError",
]


class ChimeraError(Exception):
    """A problem with the user's input or environment, reported as one line, never a traceback."""

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(ChimeraError):
    """A bad argument or setting: the command cannot run as asked (exit 2)."""

    exit_code = 2


class StoreError(ChimeraError):
    """The store file cannot be used (not a database, newer schema, missing): unreadable input."""

    exit_code = 2


class StoreWriteError(ChimeraError):
    """A change could not be written (store locked, disk full, read-only); nothing was stored."""


class UnknownCardError(ChimeraError):
    """No card of that name is in the store."""


class UnknownVersionError(ChimeraError):
    """The card exists, but not the version asked for (or none in the state asked for)."""


class UntrustedKeyError(ChimeraError):
    """The key is not in this store's trust list."""


class TrustConflictError(ChimeraError):
    """Adding the key would give one name two keys, or one key two names."""


class RejectedError(ChimeraError):
    """The version was rejected by a trusted reviewer, and a rejected version stays rejected."""


class LintBlockedError(ChimeraError):
    """The version has lint errors, so it cannot be approved."""


class StatusChangeError(ChimeraError):
    """The version is not in a status this change applies to (e.g. retiring a retired one)."""


class TamperedBlobError(ChimeraError):
    """The stored bytes are missing or no longer hash to their recorded SHA-256."""


class UnstorableNameError(ChimeraError):
    """The card's name cannot safely be a directory name or a lockfile field."""


class StatementError(ChimeraError):
    """The text is not a well-formed chimera review statement."""


class KeyExistsError(ChimeraError):
    """A key file (or its .pub) is already there: a key is never overwritten."""


class KeyWriteError(ChimeraError):
    """The new key could not be written; nothing was left behind."""


class UnsafeTargetError(ChimeraError):
    """The path to write is a symlink or not a regular file: writing there could land elsewhere."""


class LinkEscapeError(UnsafeTargetError):
    """A symlink (or a non-folder) inside a folder the user named, where a real folder belongs."""


class ApprovalsFileError(ChimeraError):
    """An approvals file beside a card cannot be read or is too large."""


class UnapprovedExportError(ChimeraError):
    """A version the gate does not pass (pending, rejected, retired, approvals not verifying)
    was asked for where only approved bytes may go (export without --unapproved)."""
