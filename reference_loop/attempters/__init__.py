"""Attempters: whatever edits the workspace for one attempt (a scripted fixer, a CLI agent, model).

The protocol (``base``) is small on purpose: the loop hands over the prompt and the workspace
path; the attempter edits files and reports its tool steps. It never reports its patch: the loop
takes the real diff from the workspace, so an attempter's account of what it did cannot stand in
for it. ``factory.make_attempter`` turns a spec into one. The names in ``__all__`` are loaded on
first use (PEP 562), so importing one module of this package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from reference_loop.attempters.base import Attempter, AttemptOutcome, ToolStep
    from reference_loop.attempters.factory import fit_to_task, make_attempter

# public name -> the module that defines it
_EXPORTS = {
    "AttemptOutcome": "reference_loop.attempters.base",
    "Attempter": "reference_loop.attempters.base",
    "ToolStep": "reference_loop.attempters.base",
    "fit_to_task": "reference_loop.attempters.factory",
    "make_attempter": "reference_loop.attempters.factory",
}

__all__ = ["AttemptOutcome", "Attempter", "ToolStep", "fit_to_task", "make_attempter"]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
