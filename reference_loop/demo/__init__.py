"""The demo walk: import, review, retrieve and run the loop on a sample task.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from reference_loop.demo.steps import (
        HISTORY_EXCERPT_HITS,
        MAX_ATTEMPTS,
        OWN_CARD,
        QUERY,
        REVIEW_TEXT_LINES,
        REVIEWER,
        TITLES,
        TOTAL_STEPS,
        URL_CARD,
        URL_CARD_TEXT,
        CardHTTPServer,
        DemoResult,
        Expectation,
        Step,
        demo_steps,
        history_excerpt,
        history_section,
        library_card_dir,
        run_demo,
        trimmed_review_screen,
    )

# public name -> the module that defines it
_EXPORTS = {
    "CardHTTPServer": "reference_loop.demo.steps",
    "DemoResult": "reference_loop.demo.steps",
    "Expectation": "reference_loop.demo.steps",
    "HISTORY_EXCERPT_HITS": "reference_loop.demo.steps",
    "MAX_ATTEMPTS": "reference_loop.demo.steps",
    "OWN_CARD": "reference_loop.demo.steps",
    "QUERY": "reference_loop.demo.steps",
    "REVIEWER": "reference_loop.demo.steps",
    "REVIEW_TEXT_LINES": "reference_loop.demo.steps",
    "Step": "reference_loop.demo.steps",
    "TITLES": "reference_loop.demo.steps",
    "TOTAL_STEPS": "reference_loop.demo.steps",
    "URL_CARD": "reference_loop.demo.steps",
    "URL_CARD_TEXT": "reference_loop.demo.steps",
    "demo_steps": "reference_loop.demo.steps",
    "history_excerpt": "reference_loop.demo.steps",
    "history_section": "reference_loop.demo.steps",
    "library_card_dir": "reference_loop.demo.steps",
    "run_demo": "reference_loop.demo.steps",
    "trimmed_review_screen": "reference_loop.demo.steps",
}

__all__ = [
    "HISTORY_EXCERPT_HITS",
    "MAX_ATTEMPTS",
    "OWN_CARD",
    "QUERY",
    "REVIEWER",
    "REVIEW_TEXT_LINES",
    "TITLES",
    "TOTAL_STEPS",
    "URL_CARD",
    "URL_CARD_TEXT",
    "CardHTTPServer",
    "DemoResult",
    "Expectation",
    "Step",
    "demo_steps",
    "history_excerpt",
    "history_section",
    "library_card_dir",
    "run_demo",
    "trimmed_review_screen",
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
