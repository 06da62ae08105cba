"""Moved to ``reference_loop.attempters.edits``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.attempters.edits import (
    EDIT_FORMATS,
    FORMATS,
    EchoedExampleError,
    Edit,
    EditError,
    FileEdit,
    apply_edit,
    choose_format,
    edit_instructions,
    editable_files,
    parse_edit,
    safe_path,
)

__all__ = [
    "EDIT_FORMATS",
    "FORMATS",
    "EchoedExampleError",
    "Edit",
    "EditError",
    "FileEdit",
    "apply_edit",
    "choose_format",
    "edit_instructions",
    "editable_files",
    "parse_edit",
    "safe_path",
]
