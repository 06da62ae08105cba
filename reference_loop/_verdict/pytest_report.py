"""A pytest plugin that reports what really ran, for the loop's verdict (pytest, stdlib only).

The loop copies this file into a private directory, puts that directory on ``PYTHONPATH`` and
loads it with ``-p`` (through ``PYTEST_ADDOPTS``), so it works with whatever interpreter the
verify command starts. It writes one JSON object per line to a file descriptor the loop opened
on a file outside the workspace (``REFERENCE_LOOP_REPORT_FD``): the collected test ids, every
collection error, every setup/call/teardown outcome, and a closing ``finish`` line. A run that
ends without that line (``os._exit(0)`` while importing the code under test) is incomplete.

``REFERENCE_LOOP_COLLECT`` names a JSON file ``{"only": [paths]}``: test files outside that list
are not collected at all (not imported), so a module the attempt added cannot run beside the
pinned tests and change their outcome.

The variables are removed from the environment as soon as the plugin is imported: a test that
starts pytest again (pytester, a subprocess) gets a plain pytest, and the report descriptor is
not inherited by anything the tests start.

PYTEST_DONT_REWRITE: pytest would otherwise rewrite this module's (absent) asserts on every run.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

_FD = "REFERENCE_LOOP_REPORT_FD"
_NONCE = "REFERENCE_LOOP_REPORT_NONCE"
_COLLECT = "REFERENCE_LOOP_COLLECT"
_ADDOPTS = "REFERENCE_LOOP_USER_ADDOPTS"
_APPEND = "REFERENCE_LOOP_APPEND_PATH"
_NO_BYTECODE = "REFERENCE_LOOP_NO_BYTECODE_FROM"
_MAX_MSG = 600


def _never_bytecode_from(workspace: str) -> None:
    """Modules under ``workspace`` are compiled from their source on every import: no cached
    ``.pyc`` is read (nor written), no sourceless ``.pyc`` is importable, and pytest's own
    assertion-rewrite cache is not read either. Everything else keeps its caches."""
    import importlib.machinery as machinery

    from _pytest.assertion import rewrite

    root = os.path.realpath(workspace)
    prefixes = tuple({root, os.path.abspath(workspace)})

    class SourceOnly(machinery.SourceFileLoader):
        def get_code(self, fullname: str) -> Any:
            return self.source_to_code(self.get_data(self.path), self.path)

    def inside(path: str) -> bool:
        # A plain prefix test first: realpath costs a stat per component, and this runs for
        # every new sys.path entry and package folder of the run.
        full = os.path.abspath(path or os.getcwd())
        if not full.startswith(prefixes):
            return False
        real = os.path.realpath(full)
        return real == root or real.startswith(root + os.sep)

    def hook(path: str) -> Any:
        if not inside(path):
            raise ImportError("not the workspace")
        return machinery.FileFinder(
            path,
            (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
            (SourceOnly, machinery.SOURCE_SUFFIXES),
        )

    sys.path_hooks.insert(0, hook)
    for entry in list(sys.path_importer_cache):
        if inside(entry):
            del sys.path_importer_cache[entry]
    cached = rewrite._read_pyc

    def read_pyc(source: Any, pyc: Any, trace: Any = None) -> Any:
        # The rewritten test modules and conftests of the workspace come from their source;
        # installed plugins keep their cache (rewriting them each run doubles pytest's start).
        if inside(str(source)):
            return None
        return cached(source, pyc, trace) if trace is not None else cached(source, pyc)

    rewrite._read_pyc = read_pyc


def _take_environment() -> tuple[int | None, str, set[str] | None]:
    fd_text = os.environ.pop(_FD, None)
    nonce = os.environ.pop(_NONCE, "")
    collect = os.environ.pop(_COLLECT, None)
    user_addopts = os.environ.pop(_ADDOPTS, None)
    workspace = os.environ.pop(_NO_BYTECODE, None)
    if workspace:
        _never_bytecode_from(workspace)
    append = os.environ.pop(_APPEND, None)
    if append and append not in sys.path:
        # `python -m pytest` started with a safe path: the workspace is importable, but after
        # site-packages, so a module there cannot stand in for an installed one.
        sys.path.append(append)
    if user_addopts is not None:
        # PYTEST_ADDOPTS carried our -p; a pytest the tests start gets only the user's value.
        if user_addopts:
            os.environ["PYTEST_ADDOPTS"] = user_addopts
        else:
            os.environ.pop("PYTEST_ADDOPTS", None)
    fd = None
    if fd_text is not None and fd_text.isdigit():
        fd = int(fd_text)
        try:
            os.set_inheritable(fd, False)
        except OSError:
            fd = None
    only = None
    if collect:
        try:
            with open(collect, encoding="utf-8") as fh:
                listed = json.load(fh).get("only")
            if isinstance(listed, list):
                only = {str(p) for p in listed}
        except (OSError, ValueError, AttributeError):
            only = set()  # unreadable: collect nothing rather than everything
    return fd, nonce, only


_fd, _nonce, _only = _take_environment()
_only_dirs = {str(Path(p).parent) for p in _only or ()}
for _p in list(_only_dirs):
    while _p not in ("", "."):
        _p = str(Path(_p).parent)
        _only_dirs.add(_p)


def _emit(
    record: dict[str, Any], _fd: int | None = _fd, _write: Any = os.write, _dumps: Any = json.dumps
) -> None:
    # The descriptor and the writers are bound now: code the tests import cannot swap them.
    if _fd is None:
        return
    data = (_dumps(record, separators=(",", ":")) + "\n").encode("utf-8", "replace")
    try:
        while data:
            data = data[_write(_fd, data) :]
    except OSError:
        pass


_RUNNER_PACKAGES = ("pytest", "_pytest", "pluggy", __name__)


def _runner_identity() -> dict[str, object]:
    """``module.attr`` -> id() of every function and class (and every function a class holds)
    of the runner's loaded modules and this plugin: a test's code that patches the runner (a
    ``runtest`` that runs nothing, a report that always passes) changes one of them."""
    found: dict[str, object] = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".", 1)[0] not in _RUNNER_PACKAGES:
            continue
        found[name] = module
        for attr, value in list(vars(module).items()):
            if callable(value):
                found[f"{name}.{attr}"] = value
                if isinstance(value, type) and value.__module__ == name:
                    for key, member in list(vars(value).items()):
                        if callable(member) or isinstance(member, (staticmethod, classmethod)):
                            found[f"{name}.{attr}.{key}"] = member
    return found


_identity: dict[str, object] = {}


def _tampered(config: Any, _runner_identity: Any = _runner_identity) -> list[str]:
    now = _runner_identity()
    changed = [k for k, v in _identity.items() if now.get(k) is not v]
    root = Path(str(config.rootpath)).resolve()
    for plugin in config.pluginmanager.get_plugins():
        path = getattr(plugin, "__file__", None)
        if not path:
            continue
        try:
            rel = Path(path).resolve().relative_to(root)
        except ValueError:
            continue
        if rel.name != "conftest.py":
            changed.append(f"plugin registered from {rel.as_posix()}")
    return sorted(changed)


def _short(longrepr: Any) -> str:
    if longrepr is None:
        return ""
    text = str(getattr(longrepr, "reprcrash", None) or longrepr)
    return text[-_MAX_MSG:]


def _rel(path: Path, root: Path) -> str | None:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


_CACHE_DIR = os.environ.pop("REFERENCE_LOOP_CACHE_DIR", None)


def _private_cache(config: Any) -> None:
    """pytest's cache (``--lf``, ``--sw``) lives outside the workspace, where an attempt cannot
    plant a "last failed" list; set before the cache plugin reads the ini value."""
    if not _CACHE_DIR:
        return
    with contextlib.suppress(AttributeError, TypeError):
        config._inicache["cache_dir"] = _CACHE_DIR


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: Any) -> None:
    _private_cache(config)
    _identity.update(_runner_identity())

    _emit(
        {
            "e": "start",
            "nonce": _nonce,
            "pytest": pytest.__version__,
            "rootdir": str(config.rootpath),
            "inifile": str(config.inipath) if config.inipath else None,
            "args": [str(a) for a in config.invocation_params.args],
            "only": sorted(_only) if _only is not None else None,
        }
    )


def pytest_ignore_collect(collection_path: Path, config: Any) -> bool | None:
    if _only is None:
        return None
    rel = _rel(collection_path, config.rootpath)
    if rel is None or rel == ".":
        return None
    if collection_path.is_dir():
        return None if rel in _only_dirs else True
    return None if rel in _only else True


# Each hook holds the writer it was defined with (a default argument, which pluggy does not
# pass): code under test that replaces this module's ``_emit`` changes nothing they write.
def pytest_collectreport(report: Any, _emit: Any = _emit) -> None:
    if report.failed:
        _emit({"e": "collecterror", "id": report.nodeid, "msg": _short(report.longrepr)})


def pytest_deselected(items: Any, _emit: Any = _emit) -> None:
    _emit({"e": "deselected", "ids": [item.nodeid for item in items]})


def pytest_collection_finish(session: Any, _emit: Any = _emit) -> None:
    _emit({"e": "items", "ids": [item.nodeid for item in session.items]})


def pytest_runtest_logreport(report: Any, _emit: Any = _emit) -> None:
    _emit(
        {
            "e": "test",
            "id": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "xfail": hasattr(report, "wasxfail"),
            "msg": _short(report.longrepr) if report.outcome != "passed" else "",
        }
    )


def pytest_sessionfinish(
    session: Any, exitstatus: Any, _emit: Any = _emit, _tampered: Any = _tampered
) -> None:
    _emit(
        {
            "e": "finish",
            "nonce": _nonce,
            "exitstatus": int(exitstatus),
            "failed": int(getattr(session, "testsfailed", 0)),
            "collected": int(getattr(session, "testscollected", 0)),
            "tampered": _tampered(session.config),
        }
    )
