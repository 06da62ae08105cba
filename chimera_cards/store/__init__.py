"""The card store: one SQLite file of blobs, versions, the audit chain, statements, search.

A leaf: it imports only ``util``, ``bundles`` and ``errors``. All SQL lives in this package.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from chimera_cards.store.audit import (
        GENESIS_HASH,
        AuditEntry,
        AuditMixin,
        audit_hash,
        canonical_json,
    )
    from chimera_cards.store.blobs import BlobsMixin
    from chimera_cards.store.connection import (
        APPLICATION_ID,
        DEFAULT_TIMEOUT,
        SQLITE_HEADER,
        StoreConnection,
        default_store_path,
        utc_now,
    )
    from chimera_cards.store.facade import Store
    from chimera_cards.store.rows import PROVENANCES, STATUSES, SUPERSEDED, Version
    from chimera_cards.store.schema import MIGRATIONS, Migration
    from chimera_cards.store.search import SearchMixin
    from chimera_cards.store.statements import (
        MAX_REMEMBERED_VERDICTS,
        THRESHOLD_SETTING,
        TRUST_EVENTS,
        StatementsMixin,
    )
    from chimera_cards.store.verify import (
        EXTRA_VERIFY_CHECKS,
        Problem,
        VerifyReport,
        check_audit_chain,
        check_blobs,
        check_bundles,
        check_trust,
        check_versions,
        resolve_hook,
        verify_store,
    )
    from chimera_cards.store.versions import VersionsMixin, check_storable_name

# public name -> the module that defines it
_EXPORTS = {
    "APPLICATION_ID": "chimera_cards.store.connection",
    "AuditEntry": "chimera_cards.store.audit",
    "AuditMixin": "chimera_cards.store.audit",
    "BlobsMixin": "chimera_cards.store.blobs",
    "DEFAULT_TIMEOUT": "chimera_cards.store.connection",
    "EXTRA_VERIFY_CHECKS": "chimera_cards.store.verify",
    "GENESIS_HASH": "chimera_cards.store.audit",
    "MAX_REMEMBERED_VERDICTS": "chimera_cards.store.statements",
    "MIGRATIONS": "chimera_cards.store.schema",
    "Migration": "chimera_cards.store.schema",
    "PROVENANCES": "chimera_cards.store.rows",
    "Problem": "chimera_cards.store.verify",
    "SQLITE_HEADER": "chimera_cards.store.connection",
    "STATUSES": "chimera_cards.store.rows",
    "SUPERSEDED": "chimera_cards.store.rows",
    "SearchMixin": "chimera_cards.store.search",
    "StatementsMixin": "chimera_cards.store.statements",
    "Store": "chimera_cards.store.facade",
    "StoreConnection": "chimera_cards.store.connection",
    "THRESHOLD_SETTING": "chimera_cards.store.statements",
    "TRUST_EVENTS": "chimera_cards.store.statements",
    "VerifyReport": "chimera_cards.store.verify",
    "Version": "chimera_cards.store.rows",
    "VersionsMixin": "chimera_cards.store.versions",
    "audit_hash": "chimera_cards.store.audit",
    "canonical_json": "chimera_cards.store.audit",
    "check_audit_chain": "chimera_cards.store.verify",
    "check_blobs": "chimera_cards.store.verify",
    "check_bundles": "chimera_cards.store.verify",
    "check_storable_name": "chimera_cards.store.versions",
    "check_trust": "chimera_cards.store.verify",
    "check_versions": "chimera_cards.store.verify",
    "default_store_path": "chimera_cards.store.connection",
    "resolve_hook": "chimera_cards.store.verify",
    "utc_now": "chimera_cards.store.connection",
    "verify_store": "chimera_cards.store.verify",
}

__all__ = [
    "APPLICATION_ID",
    "DEFAULT_TIMEOUT",
    "EXTRA_VERIFY_CHECKS",
    "GENESIS_HASH",
    "MAX_REMEMBERED_VERDICTS",
    "MIGRATIONS",
    "PROVENANCES",
    "SQLITE_HEADER",
    "STATUSES",
    "SUPERSEDED",
    "THRESHOLD_SETTING",
    "TRUST_EVENTS",
    "AuditEntry",
    "AuditMixin",
    "BlobsMixin",
    "Migration",
    "Problem",
    "SearchMixin",
    "StatementsMixin",
    "Store",
    "StoreConnection",
    "VerifyReport",
    "Version",
    "VersionsMixin",
    "audit_hash",
    "canonical_json",
    "check_audit_chain",
    "check_blobs",
    "check_bundles",
    "check_storable_name",
    "check_trust",
    "check_versions",
    "default_store_path",
    "resolve_hook",
    "utc_now",
    "verify_store",
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
