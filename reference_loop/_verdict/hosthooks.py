"""Host hooks: files in the workspace that something on the user's machine runs by itself, later,
outside any test — direnv when the folder is entered (``.envrc``), the editor when it opens the
folder (its whole settings folder: ``.vscode/settings.json`` names the interpreter and linters it
starts, ``.idea/``, ``.devcontainer/``), git when the user commits (the hook folders of husky,
lefthook, overcommit, pre-commit, and whatever folder of the tree the repository's
``core.hooksPath`` names), git run in a repository hidden in the tree (an editor scanning the
folder's subfolders for repositories reads its config; a Mercurial one runs its ``hgrc``
hooks), a virtual environment in the tree (``uv run``, the editor and ``poetry`` pick up a
``.venv`` by themselves and run its ``bin/python``), and a developer tool started in the
folder that runs code its config holds or names: ``.pdbrc`` and pdb++'s ``.pdbrc.py``,
IPython's and Jupyter's ``*_config.py`` (read from the folder they start in) and their profile
folders, rope's ``.ropeproject/config.py``, mise's enter hooks and sourced files, Emacs'
``.dir-locals.el``, yarn's ``yarnPath``, npm's ``node-options``; a linter's ``init-hook`` or
``load-plugins``, a type checker's or coverage's ``plugins``. Tool configs are read as the
tools read them (``configparser`` for INI files, ``tomllib`` for ``pyproject.toml``), so
``init-hook: ...``, a quoted or dotted TOML key and a continuation line are the same key.

A failed attempt's change is reverted whole, so only a change that is kept can leave one; a
patch that adds or edits one is an integrity violation (``host-hook``): the attempt is not
solved and its change is reverted, so nothing it wrote runs later on the host. ``.git`` itself
is never part of a patch (the workspace puts it back after every attempt).
"""

from __future__ import annotations

import configparser
import json
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from reference_loop._verdict.integrity import Change, Violation

HOST_HOOK_FILES = (
    ".envrc",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook-local.yml",
    ".overcommit.yml",
)
# Run whole when a tool starts in their folder, at any depth: pdb's and debuggers' startup files,
# an editor's local vimscript or Emacs' directory locals, IPython's and Jupyter's config (read
# from the folder they start in), mise's config (its hooks run on entering the folder), yarn's
# and npm's settings (a yarnPath or node-options runs code at the next command).
STARTUP_FILES = frozenset(
    {".pdbrc", ".pdbrc.py", ".gdbinit", ".lldbinit", ".exrc", ".nvimrc", ".nvim.lua"}
    | {".dir-locals.el", ".dir-locals-2.el", "pyvenv.cfg", ".yarnrc", ".yarnrc.yml", ".npmrc"}
    | {"ipython_config.py", "ipython_kernel_config.py", "jupyter_config.py"}
    | {"jupyter_notebook_config.py", "jupyter_server_config.py", "jupyter_lab_config.py"}
    | {"jupyter_nbconvert_config.py", "jupyter_console_config.py", "jupyter_qtconsole_config.py"}
    | {".mise.toml", "mise.toml", ".mise.local.toml", "mise.local.toml", ".rtx.toml", "rtx.toml"}
    | {".bazelrc", "gradle-wrapper.properties"}  # --run_under; the wrapper's distributionUrl
)
HOST_HOOK_DIRS = (".husky", ".githooks", ".devcontainer", ".lefthook")
# Folders, at any depth, every file of which a tool may run: an editor's settings, IPython's
# and Jupyter's profiles, rope's project config, mise's config folder, a Mercurial or Sapling
# repository (its hgrc hooks run at the next `hg status`), cargo's and maven's per-project
# config (a rustc wrapper, a build extension run at the next build).
EDITOR_DIRS = frozenset(
    {".vscode", ".idea", ".zed", ".fleet", ".theia", ".nova", ".ipython", ".jupyter"}
    | {".ropeproject", ".mise", ".hg", ".sl", ".cargo", ".mvn"}  # build wrappers, extensions
)
# Config files a developer tool reads from the folder it starts in, and the keys in them that
# make it load code (a linter's init-hook, a plugin module): a new or changed one is a host hook.
INI_CONFIGS = frozenset(
    {".pylintrc", "pylintrc", ".coveragerc", "mypy.ini", ".mypy.ini", ".flake8", "setup.cfg"}
    | {"tox.ini"}
)
TOOL_CONFIGS = INI_CONFIGS | {"pyproject.toml"}
_LOADS_CODE = frozenset({"init-hook", "load-plugins", "plugins", "local-plugins", "paths"})

_HOOKS_PATH = re.compile(rb"(?im)^\s*hookspath\s*=\s*\"?([^\"\r\n#;]*?)\"?\s*(?:[#;].*)?$")


def configured_hook_dirs(root: Path) -> tuple[str, ...]:
    """The folders of the tree that the repository at ``root`` runs hooks from
    (``core.hooksPath`` in ``.git/config``, relative to ``root``); read once, before any
    attempt, since an attempt's own edit to the config is undone anyway."""
    try:
        config = (root / ".git" / "config").read_bytes()
    except OSError:
        return ()
    found = []
    for raw in _HOOKS_PATH.findall(config):
        value = raw.decode("utf-8", "replace").strip()
        if not value:
            continue
        path = Path(value) if value.startswith("/") else root / value
        try:
            rel = path.resolve().relative_to(root.resolve())
        except ValueError:
            continue  # outside the tree: read-only under --sandbox, never in a patch
        if str(rel) != ".":  # the tree's top as the hooks folder: not told apart from the code
            found.append(rel.as_posix())
    return tuple(found)


def host_hooks(
    changes: Iterable[Change],
    hook_dirs: Sequence[str] = (),
    *,
    root: Path | None = None,
    original: Callable[[Sequence[str]], Mapping[str, bytes | None]] | None = None,
) -> list[Violation]:
    """A ``host-hook`` violation for each changed path that runs on the host by itself.

    ``root`` (the workspace) and ``original`` (the snapshot's version of some paths) let it
    read a tool config's new lines and find a repository the patch hides in the tree."""
    found = []
    dirs = (*HOST_HOOK_DIRS, *hook_dirs)
    configs: list[str] = []
    for change in changes:
        for path in {change.path, change.old_path} - {None}:
            assert path is not None
            parts = path.split("/")
            in_dir = any(path == d or path.startswith(d + "/") for d in dirs)
            if (
                path in HOST_HOOK_FILES
                or in_dir
                or parts[-1] in STARTUP_FILES
                or any(part in EDITOR_DIRS for part in parts[:-1])
            ):
                found.append(Violation("host-hook", path, _WHY))
            elif root is not None and _in_a_virtualenv(root, parts):
                why = "makes a virtual environment inside the tree: tools run its interpreter"
                found.append(Violation("host-hook", path, why))
            elif root is not None and _in_a_repository(root, parts):
                why = "makes a git repository inside the tree: git run there reads its config"
                found.append(Violation("host-hook", path, why))
            elif parts[-1] in TOOL_CONFIGS and change.path == path and change.status != "D":
                configs.append(path)
    if configs and root is not None:
        before = original(configs) if original is not None else {}
        for path in configs:
            try:
                now = (root / path).read_bytes()
            except OSError:
                continue
            name = path.rsplit("/", 1)[-1]
            new_keys = _code_keys(name, now)
            if new_keys is None:
                why = "a developer tool's config that cannot be read as the tool reads it"
                found.append(Violation("host-hook", path, why))
                continue
            old_keys = _code_keys(name, before.get(path) or b"") or {}
            if any(old_keys.get(key) != value for key, value in new_keys.items()):
                why = "a developer tool started in the folder loads the code this config names"
                found.append(Violation("host-hook", path, why))
    return found


def _code_keys(name: str, data: bytes) -> dict[str, str] | None:
    """Each key of a tool config that makes a tool load code, by where it sits, with its value
    (None when the file cannot be read as the tool reads it)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if name == "pyproject.toml":
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None
        found: dict[str, str] = {}
        _toml_keys(doc.get("tool"), "tool", found)
        return found
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return {
        f"{section.lower()}.{key}": value
        for section in parser.sections()
        for key, value in parser.items(section, raw=True)
        if key.lower().replace("_", "-") in _LOADS_CODE
    }


def _toml_keys(node: object, where: str, found: dict[str, str]) -> None:
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        here = f"{where}.{key}"
        if str(key).lower().replace("_", "-") in _LOADS_CODE:
            found[here] = json.dumps(value, sort_keys=True, default=str)
        else:
            _toml_keys(value, here, found)


_WHY = "runs on the host by itself later (direnv, the editor or a git hook), outside any test"


def _in_a_repository(root: Path, parts: list[str]) -> bool:
    """Whether a folder holding the path (below the top) is what git takes for a repository:
    ``HEAD``, ``objects/`` and ``refs/`` in it."""
    for depth in range(1, len(parts)):
        folder = os.path.join(root, *parts[:depth])
        if (
            os.path.isfile(os.path.join(folder, "HEAD"))
            and os.path.isdir(os.path.join(folder, "objects"))
            and os.path.isdir(os.path.join(folder, "refs"))
        ):
            return True
    return False


def _in_a_virtualenv(root: Path, parts: list[str]) -> bool:
    """Whether a folder holding the path is a virtual environment (``pyvenv.cfg`` in it)."""
    return any(
        os.path.isfile(os.path.join(root, *parts[:depth], "pyvenv.cfg"))
        for depth in range(1, len(parts))
    )
