"""The hook's first look: answer "go on" to a call that cannot touch a skill, importing nothing.

Claude Code runs the hook before every ``Read``, ``Bash``, ``Grep``, ``Glob`` and ``Skill`` call,
so most runs are for a file or a command that has nothing to do with skills; each pays a Python
start-up and whatever it imports. This module uses ``os``, ``re`` and ``json`` only (no pathlib,
no dataclasses, no store) and says *no skill here* only when that is certain:

- a ``Read`` / ``read_file`` of a path none of whose parts (as written or with links resolved) is
  ``skills``, ``plugins`` or ``extensions`` and that is no ``SKILL.md``: every agent's skills
  folder ends in ``skills``, and plugin and extension skills live under those names;
- a ``Bash`` / ``run_shell_command`` whose text names no skill, plugin or agent folder, runs no
  program that reads a tree or changes directory, and holds no glob with a folder in it.

Everything else (and anything that does not parse) goes on to ``agent_hooks``, which decides.
"""

from __future__ import annotations

import json
import os
import re

_READS = {
    "claude": ("Read", ("file_path",)),
    "gemini": ("read_file", ("file_path", "absolute_path", "path")),
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


def _read_is_plain(value: object, cwd: str) -> bool:
    if not isinstance(value, str) or not value:
        return False
    path = os.path.normpath(os.path.join(cwd, value))
    for form in (path, os.path.realpath(path)):
        parts = form.split(os.sep)
        if _NAMED.intersection(parts) or parts[-1].lower() == "skill.md":
            return False
    return True


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
    read_tool, keys = _READS[agent]
    if tool == read_tool:
        values = [tool_input[k] for k in keys if k in tool_input]
        return not values or not all(_read_is_plain(v, cwd) for v in values)
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
