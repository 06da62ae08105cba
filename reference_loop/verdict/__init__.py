"""The verdict on an attempt: running the verifier and the protected paths.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from reference_loop.verdict.protect import (
        DEFAULT_PROTECT,
        ProtectedChange,
        check_patterns,
        is_protected,
        protected_changes,
        verify_paths,
    )
    from reference_loop.verdict.verifier import (
        FALLBACK_FAILURE_LINES,
        HEAD_LINES,
        MAX_FAILURE_LINES,
        MAX_LINE_CHARS,
        TAIL_LINES,
        VerifyResult,
        extract_failure_lines,
        run_verifier,
    )

# public name -> the module that defines it
_EXPORTS = {
    "DEFAULT_PROTECT": "reference_loop.verdict.protect",
    "FALLBACK_FAILURE_LINES": "reference_loop.verdict.verifier",
    "HEAD_LINES": "reference_loop.verdict.verifier",
    "MAX_FAILURE_LINES": "reference_loop.verdict.verifier",
    "MAX_LINE_CHARS": "reference_loop.verdict.verifier",
    "ProtectedChange": "reference_loop.verdict.protect",
    "TAIL_LINES": "reference_loop.verdict.verifier",
    "VerifyResult": "reference_loop.verdict.verifier",
    "check_patterns": "reference_loop.verdict.protect",
    "extract_failure_lines": "reference_loop.verdict.verifier",
    "is_protected": "reference_loop.verdict.protect",
    "protected_changes": "reference_loop.verdict.protect",
    "run_verifier": "reference_loop.verdict.verifier",
    "verify_paths": "reference_loop.verdict.protect",
}

__all__ = [
    "DEFAULT_PROTECT",
    "FALLBACK_FAILURE_LINES",
    "HEAD_LINES",
    "MAX_FAILURE_LINES",
    "MAX_LINE_CHARS",
    "TAIL_LINES",
    "ProtectedChange",
    "VerifyResult",
    "check_patterns",
    "extract_failure_lines",
    "is_protected",
    "protected_changes",
    "run_verifier",
    "verify_paths",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
