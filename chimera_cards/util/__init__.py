"""Helpers every layer may use: atomic writes, path checks, URLs, worker pools, integrity.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from chimera_cards.util.atomic import WriteError, write_atomic
    from chimera_cards.util.integrity import (
        IntegrityError,
        check_integrity,
        expected_hex,
        is_hex,
        parse_sha256,
        sha256_hex,
        sri,
    )
    from chimera_cards.util.paths import LinkEscapeError, check_link_inside, write_atomic_inside
    from chimera_cards.util.urls import DEFAULT_TIMEOUT, is_url
    from chimera_cards.util.workers import WorkerError, parallel_map, usable_cpus

# public name -> the module that defines it
_EXPORTS = {
    "DEFAULT_TIMEOUT": "chimera_cards.util.urls",
    "IntegrityError": "chimera_cards.util.integrity",
    "LinkEscapeError": "chimera_cards.util.paths",
    "WorkerError": "chimera_cards.util.workers",
    "WriteError": "chimera_cards.util.atomic",
    "check_integrity": "chimera_cards.util.integrity",
    "check_link_inside": "chimera_cards.util.paths",
    "expected_hex": "chimera_cards.util.integrity",
    "is_hex": "chimera_cards.util.integrity",
    "is_url": "chimera_cards.util.urls",
    "parallel_map": "chimera_cards.util.workers",
    "parse_sha256": "chimera_cards.util.integrity",
    "sha256_hex": "chimera_cards.util.integrity",
    "sri": "chimera_cards.util.integrity",
    "usable_cpus": "chimera_cards.util.workers",
    "write_atomic": "chimera_cards.util.atomic",
    "write_atomic_inside": "chimera_cards.util.paths",
}

__all__ = [
    "DEFAULT_TIMEOUT",
    "IntegrityError",
    "LinkEscapeError",
    "WorkerError",
    "WriteError",
    "check_integrity",
    "check_link_inside",
    "expected_hex",
    "is_hex",
    "is_url",
    "parallel_map",
    "parse_sha256",
    "sha256_hex",
    "sri",
    "usable_cpus",
    "write_atomic",
    "write_atomic_inside",
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
