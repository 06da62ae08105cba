"""Claude Code hooks: refuse a skill whose bytes are not the approved ones, at the moment it loads.

Claude Code runs a ``PreToolUse`` hook command before each matching tool call, with the call as
JSON on stdin; exit 2 blocks the call and shows stderr to the model, any other non-zero exit lets
it through. ``run_hook`` is that command's body:

- a ``Skill`` call (``tool_input.skill``, a name or ``plugin:name``) or a ``Read`` of a file
  inside an agent's skills folder names a skill folder; it passes only when ``check`` calls that
  folder ``ok`` (its bytes are an approved bundle, verifying now);
- every failure blocks (fail closed): input that is not the documented JSON, a missing store, a
  skill no skills folder holds, any exception. ``fail_open`` turns those failures (not a drifted
  skill) into a warning that lets the call through.

At ``SessionStart`` it checks the project's and the user's Claude skills folders and prints what
drifted (stdout becomes context for the model; a session cannot be blocked).

``install_hooks`` merges both hooks into ``.claude/settings.json`` without touching any other
setting or hook. Payload shapes: Claude Code's hooks reference (Claude Code 2.1); they are
recorded in ``tests/test_claude_hook.py``.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from chimera_cards.atomic import write_atomic
from chimera_cards.errors import ChimeraError, UsageError

__all__ = [
    "BLOCK",
    "HOOK_COMMAND",
    "HookOutcome",
    "SettingsError",
    "hook_commands",
    "install_hooks",
    "run_hook",
    "skill_folders_for",
]

BLOCK = 2  # Claude Code: exit 2 blocks the tool call and shows stderr to the model
WARN = 1  # any other non-zero exit: the call goes on, stderr is shown to the user
HOOK_COMMAND = "chimera-cards hook claude"
# The tools through which a skill reaches the model: the Skill tool loads SKILL.md, Read opens
# any of its files.
MATCHER = "Skill|Read"


class SettingsError(UsageError):
    """``.claude/settings.json`` cannot be read or is not a JSON object: nothing is written."""


@dataclass(frozen=True)
class HookOutcome:
    """What the hook command prints and its exit code."""

    exit_code: int
    stderr: str = ""
    stdout: str = ""


def _skill_dirs(env: Mapping[str, str], root: Path) -> list[Path]:
    """Every agent's skills folders for this project and user (the agents table)."""
    from chimera_cards.agents import agent_locations

    places: list[Path] = []
    for location in agent_locations(env, root):
        for place in (location.project, location.user):
            if place and Path(place) not in places:
                places.append(Path(place))
    return places


def _claude_dirs(env: Mapping[str, str], root: Path) -> list[Path]:
    from chimera_cards.agents import find_agent, project_dir, user_dir

    agent = find_agent("claude-code")
    return [project_dir(agent, root), user_dir(agent, env)]


def _project_root(payload: Mapping[str, object], env: Mapping[str, str]) -> Path:
    # Claude Code sets CLAUDE_PROJECT_DIR for hooks; the payload's cwd follows `cd`.
    root = env.get("CLAUDE_PROJECT_DIR") or payload.get("cwd")
    return Path(root) if isinstance(root, str) and root else Path.cwd()


def skill_folders_for(
    payload: Mapping[str, object], env: Mapping[str, str]
) -> tuple[str, list[Path]] | None:
    """The skill a tool call loads, and the folders it may be loaded from.

    Args:
        payload: the PreToolUse hook input.
        env: the environment (``CLAUDE_PROJECT_DIR``, ``HOME``, ``CLAUDE_CONFIG_DIR``).
    Returns:
        (skill name, its candidate folders, existing or not), or None when the call loads no
        skill (another tool, a Read outside every skills folder).
    Raises:
        UsageError: the payload is not shaped as Claude Code documents it.
    """
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        raise UsageError("hook input has no tool_name and tool_input object")
    root = _project_root(payload, env)
    if tool == "Skill":
        name = next(
            (tool_input[k] for k in ("skill", "command", "skill_name") if k in tool_input), None
        )
        if not isinstance(name, str) or not name.strip():
            raise UsageError("Skill call without a skill name in tool_input")
        name = name.strip().lstrip("/").split(":")[-1]
        if not name or "/" in name or name.startswith("."):
            raise UsageError(f"Skill call names {name!r}, which is no skill folder name")
        return name, [d / name for d in _claude_dirs(env, root)]
    if tool == "Read":
        target = tool_input.get("file_path")
        if not isinstance(target, str) or not target:
            raise UsageError("Read call without a file_path")
        path = Path(os.path.normpath(root / target))
        for directory in _skill_dirs(env, root):
            base = Path(os.path.normpath(directory))
            if path.is_relative_to(base) and len(path.relative_to(base).parts) >= 2:
                # A file directly in the skills folder (a README, the index) is no skill's.
                name = path.relative_to(base).parts[0]
                return name, [base / name]
    return None


def _folder_verdict(store_path: Path, folder: Path, policy: object) -> str | None:
    """None when ``check`` calls the folder ok, else the one line for the model."""
    from chimera_cards.install import check
    from chimera_cards.store import Store

    with Store(store_path, create=False) as store:
        report = check(store, [folder.parent], policy)  # type: ignore[arg-type]
    state = next((s for s in report.states if Path(s.path) == folder), None)
    name = folder.name
    if state is None:
        return f"skill {name} at {folder} is no skill folder chimera-cards can check"
    if state.ok:
        return None
    if state.state == "modified":
        return f"skill {name} differs from its approved bytes: {state.detail}"
    if state.state == "revoked":
        return f"skill {name} is not approved now: {state.detail}"
    if state.state == "unknown":
        return f"skill {name} is not an approved skill ({state.detail})"
    return f"skill {name} is {state.state}: {state.detail}"


def _policy(trust_file: Path | None) -> object:
    from chimera_cards.install import Policy

    if trust_file is None:
        return Policy()
    from chimera_cards.trustfile import read_trust_file

    trust = read_trust_file(trust_file)
    return Policy(tuple(trust.trusted_keys()), trust.threshold)


def _store_file(store_path: Path | None) -> Path:
    from chimera_cards.store import default_store_path

    path = store_path or default_store_path()
    if not path.is_file():
        raise UsageError(f"no chimera-cards store at {path}")
    return path


def _pre_tool_use(
    payload: Mapping[str, object],
    env: Mapping[str, str],
    store_path: Path | None,
    trust_file: Path | None,
) -> str | None:
    """None when the call may go on, else why it may not (drift, or an unknown skill)."""
    found = skill_folders_for(payload, env)
    if found is None:
        return None
    name, candidates = found
    existing = [f for f in candidates if f.is_dir() or f.is_symlink()]
    if not existing:
        return f"skill {name} is in no skills folder chimera-cards checks; it is not approved"
    store_file = _store_file(store_path)
    policy = _policy(trust_file)
    for folder in existing:  # whichever one Claude Code loads must be approved
        why = _folder_verdict(store_file, folder, policy)
        if why is not None:
            return why
    return None


def _session_start(
    payload: Mapping[str, object],
    env: Mapping[str, str],
    store_path: Path | None,
    trust_file: Path | None,
) -> str:
    from chimera_cards.install import check
    from chimera_cards.store import Store

    root = _project_root(payload, env)
    directories = [d for d in _claude_dirs(env, root) if d.is_dir()]
    if not directories:
        return ""
    with Store(_store_file(store_path), create=False) as store:
        report = check(store, directories, _policy(trust_file))  # type: ignore[arg-type]
    bad = [s for s in report.states if not s.ok]
    if not bad:
        return ""
    lines = [
        f"chimera-cards: {len(bad)} skill folder(s) are not the approved bytes; "
        "do not use them (loading them is blocked):"
    ]
    lines += [f"- {s.line()}" for s in bad]
    return "\n".join(lines) + "\n"


def run_hook(
    data: bytes,
    *,
    store_path: Path | None = None,
    trust_file: Path | None = None,
    fail_open: bool = False,
    event: str | None = None,
    env: Mapping[str, str] | None = None,
) -> HookOutcome:
    """The hook command's whole behaviour: never raises, always an outcome.

    Args:
        data: the hook input as read from stdin.
        store_path: the store (default: the usual one).
        trust_file: judge approvals against this trust file instead of the store's trust list.
        fail_open: a failure of the hook itself warns (exit 1) instead of blocking (exit 2).
        event: ``pre-tool-use`` or ``session-start``; None: the input's ``hook_event_name``.
        env: the environment (default ``os.environ``).
    Returns:
        Exit 0 (go on), 2 with one line for the model (blocked), or 1 (a warning, fail-open).
    """
    env = os.environ if env is None else env
    failure = WARN if fail_open else BLOCK
    prefix = "chimera-cards hook"
    try:
        try:
            payload = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise UsageError(f"hook input is not JSON ({exc.__class__.__name__})") from None
        if not isinstance(payload, dict):
            raise UsageError("hook input is not a JSON object")
        kind = event or {"PreToolUse": "pre-tool-use", "SessionStart": "session-start"}.get(
            str(payload.get("hook_event_name")), "pre-tool-use"
        )
        if kind == "session-start":
            return HookOutcome(0, stdout=_session_start(payload, env, store_path, trust_file))
        why = _pre_tool_use(payload, env, store_path, trust_file)
    except ChimeraError as exc:
        return HookOutcome(failure, stderr=f"{prefix}: {exc}; {_verb(fail_open)}")
    except Exception as exc:  # fail closed: a crash must not let an unchecked skill through
        text = " ".join(str(exc).split()) or exc.__class__.__name__
        return HookOutcome(failure, stderr=f"{prefix}: failed ({text}); {_verb(fail_open)}")
    if why is None:
        return HookOutcome(0)
    return HookOutcome(BLOCK, stderr=f"{why} (chimera-cards check shows the difference)")


def _verb(fail_open: bool) -> str:
    return "not blocked (--fail-open)" if fail_open else "blocked"


def hook_commands(
    *, store: Path | None = None, trust_file: Path | None = None, fail_open: bool = False
) -> dict[str, str]:
    """The command line of each hook event, as written into settings.json.

    Without ``fail_open``, the PreToolUse command ends in ``|| exit 2``: if ``chimera-cards``
    cannot even start (not on PATH, a broken install), the shell's own failure blocks too,
    where Claude Code would otherwise let the call through.
    """
    extra = ""
    if store is not None:
        extra += f" --store {shlex.quote(str(Path(store).absolute()))}"
    if trust_file is not None:
        extra += f" --trust-file {shlex.quote(str(trust_file))}"
    pre = f"{HOOK_COMMAND} --event pre-tool-use{extra}"
    pre += " --fail-open" if fail_open else " || exit 2"
    return {
        "PreToolUse": pre,
        "SessionStart": f"{HOOK_COMMAND} --event session-start{extra}",
    }


def _ours(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    hooks = entry.get("hooks")
    return isinstance(hooks, list) and any(
        isinstance(h, dict) and str(h.get("command", "")).startswith(HOOK_COMMAND) for h in hooks
    )


def install_hooks(
    settings_path: str | os.PathLike,
    *,
    store: Path | None = None,
    trust_file: Path | None = None,
    fail_open: bool = False,
) -> list[str]:
    """Merge the PreToolUse and SessionStart hooks into a Claude Code settings file.

    Every other key, event and hook is kept as it was; an entry of ours already there is
    replaced in place (so a re-run with other options updates it), never duplicated.

    Args:
        settings_path: ``.claude/settings.json`` (created, with its folder, when missing).
        store, trust_file, fail_open: written into the hook commands.
    Returns:
        The events whose entry was added or changed (empty: the file already had them).
    Raises:
        SettingsError: the file is not valid JSON or not an object (it is left untouched).
    """
    path = Path(settings_path)
    settings: dict = {}
    if path.exists():
        try:
            loaded = json.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise SettingsError(f"{path}: cannot read it as JSON ({exc}); nothing written") from None
        if not isinstance(loaded, dict):
            raise SettingsError(f"{path}: not a JSON object; nothing written")
        settings = loaded
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f"{path}: its \"hooks\" is not an object; nothing written")
    changed = []
    for event, command in hook_commands(
        store=store, trust_file=trust_file, fail_open=fail_open
    ).items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise SettingsError(f"{path}: hooks.{event} is not a list; nothing written")
        entry: dict = {"hooks": [{"type": "command", "command": command, "timeout": 60}]}
        if event == "PreToolUse":
            entry = {"matcher": MATCHER, **entry}
        mine = [i for i, e in enumerate(entries) if _ours(e)]
        if mine and entries[mine[0]] == entry and len(mine) == 1:
            continue
        if mine:
            entries[mine[0]] = entry
            for i in reversed(mine[1:]):
                del entries[i]
        else:
            entries.append(entry)
        changed.append(event)
    if changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode())
    return changed
