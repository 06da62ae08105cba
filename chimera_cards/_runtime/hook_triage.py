"""The hook's first look: answer "go on" to a call that cannot touch a skill, importing nothing.

Claude Code runs the hook before every ``Read``, ``Bash``, ``Grep``, ``Glob`` and ``Skill`` call,
so most runs are for a file or a command that has nothing to do with skills; each pays a Python
start-up and whatever it imports. This module uses ``os``, ``re`` and ``json`` only (no pathlib,
no dataclasses, no store) and says *no skill here* only when that is certain:

- a ``Read`` / ``read_file`` (or a file edit: ``Write``, ``Edit``, ``write_file``, ...) of a path
  none of whose parts (as written or with links resolved) is ``skills``, ``plugins`` or
  ``extensions`` and that is no ``SKILL.md``, with no hidden folder holding ``skills`` in any
  folder from the path up to where the session started: every agent's skills folder ends in
  ``skills``, plugin and extension skills live under those names, and a file tool makes Claude
  Code load the project skills folders (``sub/.claude/skills``) above the path it touches;
- a ``Bash`` / ``run_shell_command`` whose text names no skill, plugin or agent folder, runs no
  program that reads a tree or changes directory, and holds no glob with a folder in it.

Everything else (and anything that does not parse) goes on to ``agent_hooks``, which decides.
"""

from __future__ import annotations

import json
import os
import re

_GEMINI_FILE = ("file_path", "absolute_path", "path")
_READS: dict[str, dict[str, tuple[str, ...]]] = {
    "claude": {
        "Read": ("file_path",),
        "Write": ("file_path",),
        "Edit": ("file_path",),
        "MultiEdit": ("file_path",),
        "NotebookEdit": ("notebook_path",),
    },
    "gemini": {"read_file": _GEMINI_FILE, "write_file": _GEMINI_FILE, "replace": _GEMINI_FILE},
}
_SHELLS = {"claude": "Bash", "gemini": "run_shell_command"}
_PRE = {"claude": "PreToolUse", "gemini": "BeforeTool"}
_NAMED = frozenset({"skills", "plugins", "extensions"})
# Any of these in a command line may reach a skills folder; agent_hooks then looks closely.
_MAYBE = re.compile(
    r"skill|plugin|extension|\.claude|\.agents|\.gemini|\.codex|~|\$"
    r"|(?<![\w.-])(?:rg|ag|ack|find|fd|fdfind|tree|tar|zip|7z|rsync|du|ugrep|grep|egrep|fgrep"
    r"|ls|cp|scp|git|cd|pushd)(?![\w.-])"
    r"|[*?\[][^\s]*/|/[^\s]*[*?\[]",
    re.IGNORECASE,
)


def _read_is_plain(value: object, cwd: str, start: str, home: str) -> bool:
    if not isinstance(value, str) or not value:
        return False
    path = os.path.normpath(os.path.join(cwd, value))
    for form in (path, os.path.realpath(path)):
        parts = form.split(os.sep)
        if _NAMED.intersection(parts) or parts[-1].lower() == "skill.md":
            return False
        if _skills_above(form, start, home):
            return False
    return True


def _skills_above(path: str, start: str, home: str) -> bool:
    """Whether a folder from ``path`` up to (not including) the start folder or the home holds
    a hidden folder with a ``skills`` folder in it (any agent's ``.x/skills``, or one level
    deeper): the project skills a file tool there would make the agent load."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    while True:
        if folder == home or start == folder or start.startswith(folder.rstrip(os.sep) + os.sep):
            return False
        try:
            with os.scandir(folder) as entries:
                hidden = [e.path for e in entries if e.name.startswith(".") and e.is_dir()]
        except OSError:
            hidden = []
        for inner in hidden:
            if os.path.isdir(os.path.join(inner, "skills")):
                return True
            try:
                with os.scandir(inner) as deeper:
                    if any(os.path.isdir(os.path.join(d.path, "skills")) for d in deeper):
                        return True
            except OSError:
                continue
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def needs_full_hook(agent: str, data: bytes, env: dict[str, str] | os._Environ) -> bool:
    """False only when the hook input is a read or a command that certainly reads no skill.

    Args:
        agent: ``claude`` or ``gemini``.
        data: the hook's stdin.
        env: for ``CLAUDE_PROJECT_DIR`` (a relative path's base when the input has no cwd).
    Returns:
        Whether the full hook (tool_targets, the store, check) must answer.
    """
    try:
        payload = json.loads(data)
    except ValueError:
        return True
    if not isinstance(payload, dict) or agent not in _PRE:
        return True
    if payload.get("hook_event_name") != _PRE[agent]:
        return True
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return True
    cwd = payload.get("cwd") or env.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    if not isinstance(cwd, str):
        return True
    keys = _READS[agent].get(tool) if isinstance(tool, str) else None
    if keys is not None:
        values = [tool_input[k] for k in keys if k in tool_input]
        start = env.get("CLAUDE_PROJECT_DIR") or env.get("GEMINI_PROJECT_DIR") or cwd
        start = os.path.normpath(start)
        home = os.path.normpath(env.get("HOME") or os.path.expanduser("~"))
        return not values or not all(_read_is_plain(v, cwd, start, home) for v in values)
    if tool == _SHELLS[agent]:
        command = tool_input.get("command")
        return not isinstance(command, str) or bool(_MAYBE.search(command))
    return True


def quick_exit(agent: str, data: bytes, env: dict[str, str] | os._Environ) -> int | None:
    """0 (after printing what the agent expects on stdout) when the call certainly reads no
    skill; None when the full hook must answer."""
    if needs_full_hook(agent, data, env):
        return None
    if agent == "gemini":  # Gemini CLI parses stdout as JSON
        os.write(1, b"{}\n")
    return 0
