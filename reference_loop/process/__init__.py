"""Running processes: process groups, sandbox, stopping, printable text.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from reference_loop.process.run import (
        Finished,
        Terminated,
        exits_cleanly_on_sigterm,
        kill_group,
        run_contained,
        run_in_group,
        sigterm_as_interrupt,
    )
    from reference_loop.process.sandbox import (
        Sandbox,
        SandboxUnavailable,
        make_sandbox,
        sandbox_attempters,
    )
    from reference_loop.process.stop import (
        Stopped,
        child_pids,
        kill_child_processes,
        signals_raise_stopped,
    )
    from reference_loop.process.textsafe import visible

# public name -> the module that defines it
_EXPORTS = {
    "Finished": "reference_loop.process.run",
    "run_contained": "reference_loop.process.run",
    "Sandbox": "reference_loop.process.sandbox",
    "SandboxUnavailable": "reference_loop.process.sandbox",
    "Stopped": "reference_loop.process.stop",
    "Terminated": "reference_loop.process.run",
    "child_pids": "reference_loop.process.stop",
    "exits_cleanly_on_sigterm": "reference_loop.process.run",
    "kill_child_processes": "reference_loop.process.stop",
    "kill_group": "reference_loop.process.run",
    "make_sandbox": "reference_loop.process.sandbox",
    "run_in_group": "reference_loop.process.run",
    "sandbox_attempters": "reference_loop.process.sandbox",
    "signals_raise_stopped": "reference_loop.process.stop",
    "sigterm_as_interrupt": "reference_loop.process.run",
    "visible": "reference_loop.process.textsafe",
}

__all__ = [
    "Finished",
    "Sandbox",
    "SandboxUnavailable",
    "Stopped",
    "Terminated",
    "child_pids",
    "exits_cleanly_on_sigterm",
    "kill_child_processes",
    "kill_group",
    "make_sandbox",
    "run_contained",
    "run_in_group",
    "sandbox_attempters",
    "signals_raise_stopped",
    "sigterm_as_interrupt",
    "visible",
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
