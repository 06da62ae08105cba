"""The reference-loop command line (thin click skins, loaded lazily).

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from reference_loop.cli.app import (
        check_cmd,
        main,
        progress_line,
        run_cmd,
        set_edit_format,
        summary_lines,
        tasks_cmd,
    )
    from reference_loop.cli.bench import (
        bench_cmd,
        check_writable_dir,
        default_jobs,
        owned_stream,
        write_json_file,
    )

# public name -> the module that defines it
_EXPORTS = {
    "bench_cmd": "reference_loop.cli.bench",
    "check_cmd": "reference_loop.cli.app",
    "check_writable_dir": "reference_loop.cli.bench",
    "default_jobs": "reference_loop.cli.bench",
    "main": "reference_loop.cli.app",
    "owned_stream": "reference_loop.cli.bench",
    "progress_line": "reference_loop.cli.app",
    "run_cmd": "reference_loop.cli.app",
    "set_edit_format": "reference_loop.cli.app",
    "summary_lines": "reference_loop.cli.app",
    "tasks_cmd": "reference_loop.cli.app",
    "write_json_file": "reference_loop.cli.bench",
}

__all__ = [
    "bench_cmd",
    "check_cmd",
    "check_writable_dir",
    "default_jobs",
    "main",
    "owned_stream",
    "progress_line",
    "run_cmd",
    "set_edit_format",
    "summary_lines",
    "tasks_cmd",
    "write_json_file",
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
