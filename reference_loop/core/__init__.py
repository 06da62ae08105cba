"""The loop's core: attempt records, history, failure signatures, ledger, planner, events, cards.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from reference_loop.core.cards import (
        CARDS_IN,
        DEFAULT_CARDS_IN,
        DEFAULT_K,
        HEADING,
        PREAMBLE,
        CardsBlock,
        cards_for_attempt,
        cards_from_options,
        cards_section,
        check_cards_in,
        describe,
        load_cards,
        review_label,
    )
    from reference_loop.core.events import EVENT_KINDS, Event, EventLog
    from reference_loop.core.history import (
        DEFAULT_BUDGET,
        LAST_HEADING,
        MODES,
        NONE_TEXT,
        OUTPUT_TAIL_LINES,
        SHORT_PATCH_CHARS,
        UNBOUNDED,
        check_mode,
        join_numbers,
        mentions,
        records_shown,
        render,
        render_fitted,
    )
    from reference_loop.core.ledger import CAUSES_HEADING, FACTS_HEADING, Cause, TaskLedger
    from reference_loop.core.planner import Planner, ScriptedPlanner, make_planner
    from reference_loop.core.records import (
        DEFAULT_PATCH_LIMIT,
        MAX_RECORD_FILES,
        VERDICTS,
        AttemptRecord,
        FailedStep,
        History,
        bound_patch,
        describe_files,
        normalise_patch,
        patch_fingerprint,
        truncation_marker,
    )
    from reference_loop.core.signature import (
        MAX_SIGNATURE_CHARS,
        MAX_SIGNATURE_LINES,
        failure_signature,
        normalise,
    )

# public name -> the module that defines it
_EXPORTS = {
    "AttemptRecord": "reference_loop.core.records",
    "CARDS_IN": "reference_loop.core.cards",
    "CAUSES_HEADING": "reference_loop.core.ledger",
    "CardsBlock": "reference_loop.core.cards",
    "Cause": "reference_loop.core.ledger",
    "DEFAULT_BUDGET": "reference_loop.core.history",
    "DEFAULT_CARDS_IN": "reference_loop.core.cards",
    "DEFAULT_K": "reference_loop.core.cards",
    "DEFAULT_PATCH_LIMIT": "reference_loop.core.records",
    "EVENT_KINDS": "reference_loop.core.events",
    "Event": "reference_loop.core.events",
    "EventLog": "reference_loop.core.events",
    "FACTS_HEADING": "reference_loop.core.ledger",
    "FailedStep": "reference_loop.core.records",
    "HEADING": "reference_loop.core.cards",
    "History": "reference_loop.core.records",
    "LAST_HEADING": "reference_loop.core.history",
    "MAX_RECORD_FILES": "reference_loop.core.records",
    "MAX_SIGNATURE_CHARS": "reference_loop.core.signature",
    "MAX_SIGNATURE_LINES": "reference_loop.core.signature",
    "MODES": "reference_loop.core.history",
    "NONE_TEXT": "reference_loop.core.history",
    "OUTPUT_TAIL_LINES": "reference_loop.core.history",
    "PREAMBLE": "reference_loop.core.cards",
    "Planner": "reference_loop.core.planner",
    "SHORT_PATCH_CHARS": "reference_loop.core.history",
    "ScriptedPlanner": "reference_loop.core.planner",
    "TaskLedger": "reference_loop.core.ledger",
    "UNBOUNDED": "reference_loop.core.history",
    "VERDICTS": "reference_loop.core.records",
    "bound_patch": "reference_loop.core.records",
    "cards_for_attempt": "reference_loop.core.cards",
    "cards_from_options": "reference_loop.core.cards",
    "cards_section": "reference_loop.core.cards",
    "check_cards_in": "reference_loop.core.cards",
    "check_mode": "reference_loop.core.history",
    "describe": "reference_loop.core.cards",
    "describe_files": "reference_loop.core.records",
    "failure_signature": "reference_loop.core.signature",
    "join_numbers": "reference_loop.core.history",
    "load_cards": "reference_loop.core.cards",
    "make_planner": "reference_loop.core.planner",
    "mentions": "reference_loop.core.history",
    "normalise": "reference_loop.core.signature",
    "normalise_patch": "reference_loop.core.records",
    "patch_fingerprint": "reference_loop.core.records",
    "records_shown": "reference_loop.core.history",
    "render": "reference_loop.core.history",
    "render_fitted": "reference_loop.core.history",
    "review_label": "reference_loop.core.cards",
    "truncation_marker": "reference_loop.core.records",
}

__all__ = [
    "CARDS_IN",
    "CAUSES_HEADING",
    "DEFAULT_BUDGET",
    "DEFAULT_CARDS_IN",
    "DEFAULT_K",
    "DEFAULT_PATCH_LIMIT",
    "EVENT_KINDS",
    "FACTS_HEADING",
    "HEADING",
    "LAST_HEADING",
    "MAX_RECORD_FILES",
    "MAX_SIGNATURE_CHARS",
    "MAX_SIGNATURE_LINES",
    "MODES",
    "NONE_TEXT",
    "OUTPUT_TAIL_LINES",
    "PREAMBLE",
    "SHORT_PATCH_CHARS",
    "UNBOUNDED",
    "VERDICTS",
    "AttemptRecord",
    "CardsBlock",
    "Cause",
    "Event",
    "EventLog",
    "FailedStep",
    "History",
    "Planner",
    "ScriptedPlanner",
    "TaskLedger",
    "bound_patch",
    "cards_for_attempt",
    "cards_from_options",
    "cards_section",
    "check_cards_in",
    "check_mode",
    "describe",
    "describe_files",
    "failure_signature",
    "join_numbers",
    "load_cards",
    "make_planner",
    "mentions",
    "normalise",
    "normalise_patch",
    "patch_fingerprint",
    "records_shown",
    "render",
    "render_fitted",
    "review_label",
    "truncation_marker",
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
