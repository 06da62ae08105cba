"""Retrieval behind the approval gate: the gate, matching, rendering for a prompt, export.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from chimera_cards.retrieve.export import (
        EXPORT_HOOKS,
        ExportResult,
        export_card,
        select_version,
        write_bundle_dir,
    )
    from chimera_cards.retrieve.gate import (
        MODEL_READ_PATHS,
        OTHER_READ_PATHS,
        GateDecision,
        gate_check,
        gate_version,
    )
    from chimera_cards.retrieve.matching import (
        BM25_WEIGHTS,
        MAX_QUERY_TERMS,
        fts_phrases,
        fts_query,
        held_back,
        match,
        match_path,
        sync_index,
    )
    from chimera_cards.retrieve.render import (
        Match,
        MatchList,
        RenderCache,
        prompt_preview,
        render_for_prompt,
        render_one,
    )

# public name -> the module that defines it
_EXPORTS = {
    "BM25_WEIGHTS": "chimera_cards.retrieve.matching",
    "EXPORT_HOOKS": "chimera_cards.retrieve.export",
    "ExportResult": "chimera_cards.retrieve.export",
    "GateDecision": "chimera_cards.retrieve.gate",
    "MAX_QUERY_TERMS": "chimera_cards.retrieve.matching",
    "MODEL_READ_PATHS": "chimera_cards.retrieve.gate",
    "Match": "chimera_cards.retrieve.render",
    "MatchList": "chimera_cards.retrieve.render",
    "OTHER_READ_PATHS": "chimera_cards.retrieve.gate",
    "RenderCache": "chimera_cards.retrieve.render",
    "export_card": "chimera_cards.retrieve.export",
    "fts_phrases": "chimera_cards.retrieve.matching",
    "fts_query": "chimera_cards.retrieve.matching",
    "gate_check": "chimera_cards.retrieve.gate",
    "gate_version": "chimera_cards.retrieve.gate",
    "held_back": "chimera_cards.retrieve.matching",
    "match": "chimera_cards.retrieve.matching",
    "match_path": "chimera_cards.retrieve.matching",
    "prompt_preview": "chimera_cards.retrieve.render",
    "render_for_prompt": "chimera_cards.retrieve.render",
    "render_one": "chimera_cards.retrieve.render",
    "select_version": "chimera_cards.retrieve.export",
    "sync_index": "chimera_cards.retrieve.matching",
    "write_bundle_dir": "chimera_cards.retrieve.export",
}

__all__ = [
    "BM25_WEIGHTS",
    "EXPORT_HOOKS",
    "MAX_QUERY_TERMS",
    "MODEL_READ_PATHS",
    "OTHER_READ_PATHS",
    "ExportResult",
    "GateDecision",
    "Match",
    "MatchList",
    "RenderCache",
    "export_card",
    "fts_phrases",
    "fts_query",
    "gate_check",
    "gate_version",
    "held_back",
    "match",
    "match_path",
    "prompt_preview",
    "render_for_prompt",
    "render_one",
    "select_version",
    "sync_index",
    "write_bundle_dir",
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
