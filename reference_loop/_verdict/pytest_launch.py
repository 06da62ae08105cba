"""Start pytest as its own entry point does, with the loop's report plugin already registered
(stdlib only: it runs under whatever interpreter the verify command starts).

The loop copies this file next to the plugin, outside the workspace, and runs
``PYTHON -P -m _reference_loop_launch MODE ARGS`` in place of ``PYTHON -m pytest ARGS`` (MODE
``pytest``) or of a standard ``pytest`` console script (MODE: the script's path): with ``-P``
the workspace is not on ``sys.path`` when this module and the plugin are imported, and the
processes the tests start get the user's environment.

Registering the plugin as an object skips pytest's lookup of a ``-p`` name among the entry
points of every installed distribution. Everything else is what the replaced entry point does:
``sys.argv[0]`` (pytest's ``__main__.py`` or the script, so its program name), ``sys.path[0]``
of a script (its folder), the exit status, a broken pipe, a user's ``-p no:NAME``. The plugins
the untouched tree's run loaded from entry points come in ``REFERENCE_LOOP_PLUGINS`` and are
loaded as ``-p NAME`` would load them.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import json
import os
import re
import sys


def _argv0(mode: str) -> str:
    if mode != "pytest":
        # What the console script does to its own name.
        return re.sub(r"(-script\.pyw|\.exe)?$", "", mode)
    import importlib.util

    spec = importlib.util.find_spec("pytest.__main__")
    return (spec.origin if spec is not None and spec.origin else None) or "-m"


def main() -> int:
    """Run pytest with the report plugin registered; its exit status."""
    names = json.loads(os.environ.pop("REFERENCE_LOOP_PLUGINS", "[]"))
    if len(sys.argv) < 2:
        sys.stderr.write("error: _reference_loop_launch needs pytest or a script path\n")
        return 4
    mode = sys.argv[1]
    sys.argv[:2] = [_argv0(mode)]
    import _reference_loop_report as plugin  # type: ignore[import-not-found]
    from _pytest import config

    if mode != "pytest" and not os.environ.get("PYTHONSAFEPATH"):
        # A script's folder comes first on its sys.path (put there once pytest and the plugin
        # are imported: this run's -P kept every folder but the installed ones out until then).
        sys.path.insert(0, os.path.dirname(os.path.realpath(mode)))
    plugins: list[object] = [plugin, *names]
    start = getattr(config, "_main", None)
    try:
        if start is not None:  # pytest >= 9.1
            code = start(args=None, plugins=plugins, prog=config._get_prog_name(sys.argv))
        else:
            code = config.main(args=None, plugins=plugins)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # As pytest's own entry point: the remaining output goes nowhere.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
