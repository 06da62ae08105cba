"""Host hooks: files in the workspace that something on the user's machine runs by itself, later,
outside any test — direnv when the folder is entered (``.envrc``), the editor when it opens the
folder (``.vscode/tasks.json``, ``.devcontainer/``), git when the user commits (the hook folders
of husky, lefthook, overcommit, pre-commit, and whatever folder of the tree the repository's
``core.hooksPath`` names).

A failed attempt's change is reverted whole, so only a change that is kept can leave one; a
patch that adds or edits one is an integrity violation (``host-hook``): the attempt is not
solved and its change is reverted, so nothing it wrote runs later on the host. ``.git`` itself
is never part of a patch (the workspace puts it back after every attempt).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from reference_loop._verdict.integrity import Change, Violation

HOST_HOOK_FILES = (
    ".envrc",
    ".vscode/tasks.json",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook-local.yml",
    ".overcommit.yml",
)
HOST_HOOK_DIRS = (".husky", ".githooks", ".devcontainer", ".lefthook")

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


def host_hooks(changes: Iterable[Change], hook_dirs: Sequence[str] = ()) -> list[Violation]:
    """A ``host-hook`` violation for each changed path that runs on the host by itself."""
    found = []
    dirs = (*HOST_HOOK_DIRS, *hook_dirs)
    for change in changes:
        for path in {change.path, change.old_path} - {None}:
            assert path is not None
            in_dir = any(path == d or path.startswith(d + "/") for d in dirs)
            if path in HOST_HOOK_FILES or in_dir:
                found.append(
                    Violation(
                        "host-hook",
                        path,
                        "runs on the host by itself later (direnv, the editor or a git hook), "
                        "outside any test",
                    )
                )
    return found
