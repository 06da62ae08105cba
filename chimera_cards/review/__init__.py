"""Review: approve/reject/retire, the review screen and queue, statements files, trust files.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from chimera_cards.review.decisions import (
        Change,
        Decision,
        accepted_findings,
        add_trust,
        approve,
        default_expiry,
        reconcile,
        reject,
        remove_trust,
        retire,
        set_default_expiry,
        set_threshold,
        store_statement,
        trust_status,
        verdict_for,
    )
    from chimera_cards.review.statements import (
        MAX_APPROVALS_FILE_BYTES,
        StatementImport,
        apply_statements,
        hold_older_import,
        import_hook,
        import_statements,
        read_statements_file,
        verify_check,
        write_statements,
    )
    from chimera_cards.review.supersession import DowngradeError, Standing, standing
    from chimera_cards.review.trustfile import (
        TrustFile,
        TrustFileError,
        apply_trust_file,
        format_trust_file,
        parse_trust_file,
        read_trust_file,
        store_trust_file,
        write_trust_file,
    )
    from chimera_cards.review.view import (
        ExpiringApproval,
        QueueItem,
        ReviewQueue,
        ReviewView,
        expiring_approvals,
        format_view,
        review_queue,
        review_view,
    )

# public name -> the module that defines it
_EXPORTS = {
    "DowngradeError": "chimera_cards.review.supersession",
    "Standing": "chimera_cards.review.supersession",
    "standing": "chimera_cards.review.supersession",
    "default_expiry": "chimera_cards.review.decisions",
    "set_default_expiry": "chimera_cards.review.decisions",
    "ExpiringApproval": "chimera_cards.review.view",
    "expiring_approvals": "chimera_cards.review.view",
    "hold_older_import": "chimera_cards.review.statements",
    "Change": "chimera_cards.review.decisions",
    "Decision": "chimera_cards.review.decisions",
    "MAX_APPROVALS_FILE_BYTES": "chimera_cards.review.statements",
    "QueueItem": "chimera_cards.review.view",
    "ReviewQueue": "chimera_cards.review.view",
    "ReviewView": "chimera_cards.review.view",
    "StatementImport": "chimera_cards.review.statements",
    "TrustFile": "chimera_cards.review.trustfile",
    "TrustFileError": "chimera_cards.review.trustfile",
    "accepted_findings": "chimera_cards.review.decisions",
    "add_trust": "chimera_cards.review.decisions",
    "apply_statements": "chimera_cards.review.statements",
    "apply_trust_file": "chimera_cards.review.trustfile",
    "approve": "chimera_cards.review.decisions",
    "format_trust_file": "chimera_cards.review.trustfile",
    "format_view": "chimera_cards.review.view",
    "import_hook": "chimera_cards.review.statements",
    "import_statements": "chimera_cards.review.statements",
    "parse_trust_file": "chimera_cards.review.trustfile",
    "read_statements_file": "chimera_cards.review.statements",
    "read_trust_file": "chimera_cards.review.trustfile",
    "reconcile": "chimera_cards.review.decisions",
    "reject": "chimera_cards.review.decisions",
    "remove_trust": "chimera_cards.review.decisions",
    "retire": "chimera_cards.review.decisions",
    "review_queue": "chimera_cards.review.view",
    "review_view": "chimera_cards.review.view",
    "set_threshold": "chimera_cards.review.decisions",
    "store_statement": "chimera_cards.review.decisions",
    "store_trust_file": "chimera_cards.review.trustfile",
    "trust_status": "chimera_cards.review.decisions",
    "verdict_for": "chimera_cards.review.decisions",
    "verify_check": "chimera_cards.review.statements",
    "write_statements": "chimera_cards.review.statements",
    "write_trust_file": "chimera_cards.review.trustfile",
}

__all__ = [
    "MAX_APPROVALS_FILE_BYTES",
    "Change",
    "Decision",
    "DowngradeError",
    "ExpiringApproval",
    "QueueItem",
    "ReviewQueue",
    "ReviewView",
    "Standing",
    "StatementImport",
    "TrustFile",
    "TrustFileError",
    "accepted_findings",
    "add_trust",
    "apply_statements",
    "apply_trust_file",
    "approve",
    "default_expiry",
    "expiring_approvals",
    "format_trust_file",
    "format_view",
    "hold_older_import",
    "import_hook",
    "import_statements",
    "parse_trust_file",
    "read_statements_file",
    "read_trust_file",
    "reconcile",
    "reject",
    "remove_trust",
    "retire",
    "review_queue",
    "review_view",
    "set_default_expiry",
    "set_threshold",
    "standing",
    "store_statement",
    "store_trust_file",
    "trust_status",
    "verdict_for",
    "verify_check",
    "write_statements",
    "write_trust_file",
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
