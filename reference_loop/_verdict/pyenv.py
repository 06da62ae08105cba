"""What the verifier's Python imports: its interpreter, standard library and installed names.

A new top-level module in the workspace named like one of these (``pytest.py``, ``_pytest/``,
``json.py``) would be imported instead of the real one wherever the workspace comes first on
``sys.path``; the integrity checks refuse such a module. The names are computed, not listed by
hand: the standard library's names and every top-level name importable from the interpreter's
``sys.path`` outside the workspace, probed once per interpreter with ``-I`` (isolated: the
workspace cannot take part in the probe).
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

_PROBE = r"""
import importlib.machinery as m, importlib.util as u, json, os, sys
names = set(sys.stdlib_module_names) | set(sys.builtin_module_names)
suffixes = tuple(m.all_suffixes())
paths = [p for p in sys.path if p and os.path.isdir(p)]
tops = {}
for p in paths:
    found = set()
    try:
        entries = os.listdir(p)
    except OSError:
        continue
    for e in entries:
        if e.endswith((".dist-info", ".egg-info", ".pth")) or e.startswith("."):
            continue
        full = os.path.join(p, e)
        if os.path.isdir(full):
            if e.isidentifier() and e != "__pycache__":
                found.add(e)
            continue
        for s in suffixes:
            if e.endswith(s) and e[: -len(s)].isidentifier():
                found.add(e[: -len(s)])
                break
    tops[p] = sorted(found)
print(json.dumps({
    "executable": sys.executable,
    "stdlib": sorted(names),
    "paths": paths,
    "tops": tops,
    "cache_tag": sys.implementation.cache_tag,
    "magic": u.MAGIC_NUMBER.hex(),
    "ext_suffixes": list(m.EXTENSION_SUFFIXES),
    "version": list(sys.version_info[:2]),
}))
"""

_PYTHON_NAMES = ("python", "python3")
_PYTEST_NAMES = ("pytest", "py.test")


@dataclass(frozen=True)
class PyEnv:
    """One Python interpreter's view of what it can import."""

    executable: str
    stdlib: frozenset[str]
    paths: tuple[str, ...]
    tops: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    cache_tag: str = ""
    magic: str = ""
    ext_suffixes: tuple[str, ...] = ()
    version: tuple[int, int] = (0, 0)

    def shadowable(self, workspace: Path) -> frozenset[str]:
        """Names a new workspace module must not take: the standard library's and everything
        importable from a ``sys.path`` entry outside ``workspace``."""
        ws = str(workspace.resolve())
        names = set(self.stdlib)
        for path, found in self.tops.items():
            real = os.path.realpath(path)
            if real == ws or real.startswith(ws + os.sep):
                continue  # the project's own modules are the code under test
            names.update(found)
        return frozenset(names)

    def workspace_paths(self, workspace: Path) -> tuple[str, ...]:
        """The ``sys.path`` entries inside ``workspace``, relative ('' is its root)."""
        ws = workspace.resolve()
        out = []
        for path in self.paths:
            try:
                rel = Path(os.path.realpath(path)).relative_to(ws).as_posix()
            except ValueError:
                continue
            out.append("" if rel == "." else rel)
        return tuple(out)


def _resolve(word: str, cwd: Path, env: Mapping[str, str]) -> str | None:
    if "/" in word:
        path = (cwd / word) if not os.path.isabs(word) else Path(word)
        return str(path) if path.exists() else None
    return shutil.which(word, path=env.get("PATH", os.defpath))


def _shebang(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            first = fh.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env" and len(words) > 1:
        return shutil.which(words[1])
    return words[0]


def verifier_interpreter(command: str, cwd: Path, env: Mapping[str, str]) -> str | None:
    """The Python interpreter a verify command starts first, or None when it starts none
    (or it cannot be told from the command).

    Args:
        command: the expanded verify command.
        cwd: where it runs.
        env: its environment (PATH decides what a bare ``pytest`` is).

    Returns:
        The interpreter's path.
    """
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]  # VAR=value prefixes
    if not words:
        return None
    name = os.path.basename(words[0])
    if name.startswith(_PYTHON_NAMES):
        return _resolve(words[0], cwd, env)
    if name in _PYTEST_NAMES:
        script = _resolve(words[0], cwd, env)
        return _shebang(script) if script else None
    return None


@functools.lru_cache(maxsize=16)
def _probe_cached(executable: str, stamp: float) -> PyEnv | None:
    try:
        proc = subprocess.run(
            [executable, "-I", "-c", _PROBE],
            capture_output=True,
            timeout=60,
            check=False,
            cwd="/",
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        return None
    return PyEnv(
        executable=str(data["executable"]),
        stdlib=frozenset(data["stdlib"]),
        paths=tuple(data["paths"]),
        tops={k: tuple(v) for k, v in data["tops"].items()},
        cache_tag=str(data["cache_tag"]),
        magic=str(data["magic"]),
        ext_suffixes=tuple(data["ext_suffixes"]),
        version=(int(data["version"][0]), int(data["version"][1])),
    )


def probe(executable: str | None = None) -> PyEnv | None:
    """What ``executable`` (default: this interpreter) can import; None when it cannot be run.
    Probed once per interpreter and modification time."""
    exe = executable or sys.executable
    try:
        stamp = os.stat(exe).st_mtime
    except OSError:
        return None
    return _probe_cached(exe, stamp)
