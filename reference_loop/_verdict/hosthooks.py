"""Host hooks: files in the workspace that something on the user's machine runs by itself, later,
outside any test — direnv when the folder is entered (``.envrc``), the editor when it opens the
folder (its whole settings folder: ``.vscode/settings.json`` names the interpreter and linters it
starts, ``.idea/``, ``.devcontainer/``), git when the user commits (the hook folders of husky,
lefthook, overcommit, pre-commit, and whatever folder of the tree the repository's
``core.hooksPath`` names), git run in a repository hidden in the tree (an editor scanning the
folder's subfolders for repositories reads its config), and a developer tool started in the
folder that loads code its config names (``.pdbrc`` is Python, a linter's ``init-hook`` or
``load-plugins``, a type checker's or coverage's ``plugins``).

A failed attempt's change is reverted whole, so only a change that is kept can leave one; a
patch that adds or edits one is an integrity violation (``host-hook``): the attempt is not
solved and its change is reverted, so nothing it wrote runs later on the host. ``.git`` itself
is never part of a patch (the workspace puts it back after every attempt).
"""

from __future__ import annotations

import os
import re
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
# an editor's local vimscript.
STARTUP_FILES = frozenset({".pdbrc", ".gdbinit", ".lldbinit", ".exrc", ".nvimrc", ".nvim.lua"})
HOST_HOOK_DIRS = (".husky", ".githooks", ".devcontainer", ".lefthook")
# An editor's settings folder, at any depth: every file in it may name a program it starts.
EDITOR_DIRS = frozenset({".vscode", ".idea", ".zed", ".fleet", ".theia", ".nova"})
# Config files a developer tool reads from the folder it starts in, and the keys in them that
# make it load code (a linter's init-hook, a plugin module): a new such line is a host hook.
TOOL_CONFIGS = frozenset(
    {".pylintrc", "pylintrc", ".coveragerc", "mypy.ini", ".mypy.ini", ".flake8", "setup.cfg"}
    | {"tox.ini", "pyproject.toml"}
)
_LOADS_CODE = re.compile(
    rb"(?im)^\s*(?:init[-_]hook|load[-_]plugins|plugins|local[-_]plugins|paths)\s*="
)

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
            was = set((before.get(path) or b"").splitlines())
            if any(_LOADS_CODE.match(line) and line not in was for line in now.splitlines()):
                why = "a developer tool started in the folder loads the code this config names"
                found.append(Violation("host-hook", path, why))
    return found


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
