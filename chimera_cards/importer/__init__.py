"""Importing: fetch, lint and store a source's skills; import hooks, lockfile and updates.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from chimera_cards.importer.hooks import APPROVALS_FILENAME, approvals
    from chimera_cards.importer.lockfile import (
        DIGEST_PREFIX,
        HEADER,
        LockfileError,
        Pins,
        check_pin,
        format_lockfile,
        parse_lockfile,
        read_lockfile,
        write_lockfile,
    )
    from chimera_cards.importer.pipeline import (
        BATCH_BYTES,
        BATCH_CARDS,
        CHECK_BLOCK,
        CHUNK_BUNDLES,
        CHUNK_BYTES,
        IMPORT_HOOKS,
        PAUSE_ENV,
        POOL_BATCH_CARDS,
        POOL_BATCH_FILES,
        POOL_MIN_BUNDLES,
        POOL_TAIL_CARDS,
        Analysis,
        Candidate,
        ImportResult,
        analyse,
        declared_taint,
        import_source,
        prepare,
    )
    from chimera_cards.importer.update import UpdateResult, origins, outdated, refetch_args

# public name -> the module that defines it
_EXPORTS = {
    "APPROVALS_FILENAME": "chimera_cards.importer.hooks",
    "Analysis": "chimera_cards.importer.pipeline",
    "BATCH_BYTES": "chimera_cards.importer.pipeline",
    "BATCH_CARDS": "chimera_cards.importer.pipeline",
    "CHECK_BLOCK": "chimera_cards.importer.pipeline",
    "CHUNK_BUNDLES": "chimera_cards.importer.pipeline",
    "CHUNK_BYTES": "chimera_cards.importer.pipeline",
    "Candidate": "chimera_cards.importer.pipeline",
    "DIGEST_PREFIX": "chimera_cards.importer.lockfile",
    "HEADER": "chimera_cards.importer.lockfile",
    "IMPORT_HOOKS": "chimera_cards.importer.pipeline",
    "ImportResult": "chimera_cards.importer.pipeline",
    "LockfileError": "chimera_cards.importer.lockfile",
    "PAUSE_ENV": "chimera_cards.importer.pipeline",
    "POOL_BATCH_CARDS": "chimera_cards.importer.pipeline",
    "POOL_BATCH_FILES": "chimera_cards.importer.pipeline",
    "POOL_MIN_BUNDLES": "chimera_cards.importer.pipeline",
    "POOL_TAIL_CARDS": "chimera_cards.importer.pipeline",
    "Pins": "chimera_cards.importer.lockfile",
    "UpdateResult": "chimera_cards.importer.update",
    "analyse": "chimera_cards.importer.pipeline",
    "approvals": "chimera_cards.importer.hooks",
    "check_pin": "chimera_cards.importer.lockfile",
    "declared_taint": "chimera_cards.importer.pipeline",
    "format_lockfile": "chimera_cards.importer.lockfile",
    "import_source": "chimera_cards.importer.pipeline",
    "origins": "chimera_cards.importer.update",
    "outdated": "chimera_cards.importer.update",
    "parse_lockfile": "chimera_cards.importer.lockfile",
    "prepare": "chimera_cards.importer.pipeline",
    "read_lockfile": "chimera_cards.importer.lockfile",
    "refetch_args": "chimera_cards.importer.update",
    "write_lockfile": "chimera_cards.importer.lockfile",
}

__all__ = [
    "APPROVALS_FILENAME",
    "BATCH_BYTES",
    "BATCH_CARDS",
    "CHECK_BLOCK",
    "CHUNK_BUNDLES",
    "CHUNK_BYTES",
    "DIGEST_PREFIX",
    "HEADER",
    "IMPORT_HOOKS",
    "PAUSE_ENV",
    "POOL_BATCH_CARDS",
    "POOL_BATCH_FILES",
    "POOL_MIN_BUNDLES",
    "POOL_TAIL_CARDS",
    "Analysis",
    "Candidate",
    "ImportResult",
    "LockfileError",
    "Pins",
    "UpdateResult",
    "analyse",
    "approvals",
    "check_pin",
    "declared_taint",
    "format_lockfile",
    "import_source",
    "origins",
    "outdated",
    "parse_lockfile",
    "prepare",
    "read_lockfile",
    "refetch_args",
    "write_lockfile",
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
