"""Agent hooks: refuse a skill whose bytes are not the approved ones, at the moment it loads.

Claude Code (``PreToolUse``) and Gemini CLI (``BeforeTool``) run a hook command before each
matching tool call, with the call as JSON on stdin; exit 2 blocks the call and shows stderr to
the model, any other non-zero exit lets it through. ``run_hook`` is that command's body:

- ``tool_targets`` maps the call to the skill folders it can read: a skill-loading call
  (Claude Code's ``Skill``, a name or ``plugin:name``, judged by the plugin's own folder; Gemini
  CLI's ``activate_skill``), a file read (``Read``, ``read_file``), a search (``Grep``, ``Glob``)
  over a folder holding skills, a shell command (``Bash``) whose words name a skill folder or
  search a tree holding one; it passes only when ``check`` calls every one of them ``ok`` (its
  bytes are an approved bundle, verifying now);
- every failure blocks (fail closed): input that is not the documented JSON, a missing store, a
  skill no skills folder holds, any exception, and (in the command, ``cli/plain.hook_body``) no
  answer within its deadline. ``fail_open`` turns those failures (not a drifted skill) into a
  warning that lets the call through.

A call that names no skills folder at all is answered by ``hook_triage`` before this module (or
the store) is even imported.

At ``SessionStart`` it checks the agent's project and user skills folders and reports what
drifted (as context for the model; a session cannot be blocked).

At ``UserPromptSubmit`` (Claude Code) it judges a prompt's leading ``/skill`` and its
``@path`` mentions as the Skill and Read calls they stand for.

``install_hooks`` merges the hooks into the agent's settings file (``.claude/settings.json``,
``.gemini/settings.json``, or the managed file: ``MANAGED_SETTINGS``) without touching any
other setting or hook. Payload shapes: Claude Code's hooks reference (Claude Code 2.1) and
Gemini CLI's; they are recorded in ``tests/chimera_cards/runtime/test_agent_hooks.py``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from chimera_cards._util.atomic import write_atomic
from chimera_cards.errors import ChimeraError, UsageError

TYPE_CHECKING = False  # the hook starts for every matching tool call: no typing at run time
if TYPE_CHECKING:
    from chimera_cards._install.policy import Policy
    from chimera_cards._runtime.tool_targets import Judge


BLOCK = 2  # Claude Code: exit 2 blocks the tool call and shows stderr to the model
WARN = 1  # any other non-zero exit: the call goes on, stderr is shown to the user


@dataclass(frozen=True)
class AgentHooks:
    """How one agent's hooks name a skill being loaded, and where its hook settings live.

    The tools the hook judges, and where each keeps its argument, are ``tool_targets.TOOLS``
    (the matcher lists them). ``dirs``
    are agents-table names whose project and user folders the agent loads skills from, plus
    ``extra_dirs`` (relative to the project root). ``json_stdout``: the agent parses stdout as
    JSON, so the hook prints ``{}`` (or its JSON answer) and nothing else.
    """

    name: str
    pre_event: str
    dirs: tuple[str, ...]
    settings: str
    extra_dirs: tuple[str, ...] = ()
    json_stdout: bool = False

    @property
    def matcher(self) -> str:
        from chimera_cards._runtime.tool_targets import TOOLS

        return "|".join(TOOLS[self.name])

    @property
    def command(self) -> str:
        return f"chimera-cards hook {self.name}"


AGENT_HOOKS = {
    "claude": AgentHooks(
        name="claude",
        pre_event="PreToolUse",
        dirs=("claude-code",),
        settings=".claude/settings.json",
    ),
    "gemini": AgentHooks(
        name="gemini",
        pre_event="BeforeTool",
        dirs=("gemini-cli",),
        settings=".gemini/settings.json",
        extra_dirs=(".gemini/skills",),
        json_stdout=True,
    ),
}


# The settings file only the machine's administrator writes. A project's own settings can
# switch hooks off (Claude Code's ``disableAllHooks`` in ``.claude/settings.local.json``, which
# a repository can ship) and can drop a hook written into ``.claude/settings.json``; neither
# reaches a hook in managed settings (measured with Claude Code 2.1.332).
MANAGED_SETTINGS = {
    "claude": Path("/etc/claude-code/managed-settings.json"),
    "gemini": Path("/etc/gemini-cli/settings.json"),
}


class SettingsError(UsageError):
    """``.claude/settings.json`` cannot be read or is not a JSON object: nothing is written."""


@dataclass(frozen=True)
class HookOutcome:
    """What the hook command prints and its exit code."""

    exit_code: int
    stderr: str = ""
    stdout: str = ""


def _agent_dirs(agent: AgentHooks, env: Mapping[str, str], root: Path) -> list[Path]:
    """The folders ``agent`` loads skills from: project ones first, then user-wide."""
    from chimera_cards._install.agents import find_agent, project_dir, user_dir

    found = [find_agent(name) for name in agent.dirs]
    places = [root / extra for extra in agent.extra_dirs]
    places += [project_dir(a, root) for a in found] + [user_dir(a, env) for a in found]
    return list(dict.fromkeys(places))


def user_settings(agent: str, env: Mapping[str, str] | None = None) -> Path:
    """The agent's user-wide settings file: beside its user skills folder (``~/.claude``,
    ``$CLAUDE_CONFIG_DIR``, ``~/.gemini``), named ``settings.json``."""
    from chimera_cards._install.agents import find_agent, user_dir

    hooks = AGENT_HOOKS[agent]
    return user_dir(find_agent(hooks.dirs[0]), env).parent / "settings.json"


def _project_root(payload: Mapping[str, object], env: Mapping[str, str]) -> Path:
    # The payload's cwd follows `cd`; Claude Code sets CLAUDE_PROJECT_DIR (the session's start)
    # for hooks, and both are looked at.
    root = payload.get("cwd") or env.get("CLAUDE_PROJECT_DIR")
    return Path(root) if isinstance(root, str) and root else Path.cwd()


def _verdict(store, judge: Judge, policy: Policy, judged: dict[str, str | None]) -> str | None:
    """None when ``check`` calls every folder the judge covers ok, else the one line for the
    model. ``judged`` gets the digest ``check`` read of each folder it called ok."""
    from chimera_cards._install.verify import check

    only = None if judge.name is None else [judge.name]
    states = [s for s in check(store, [judge.directory], policy, only=only).states]
    judged.update((os.path.abspath(s.path), s.digest) for s in states if s.ok and s.path)
    if judge.name is not None:
        folder = judge.directory / judge.name
        state = next((s for s in states if Path(s.path).name == judge.name), None)
        if state is None:
            return f"skill {judge.name} at {folder} is no skill folder chimera-cards can check"
        states = [state]
    for state in states:
        if state.ok or state.state == "missing":
            continue
        name = state.name
        if state.state == "modified":
            return f"skill {name} differs from its approved bytes: {state.detail}"
        if state.state == "revoked":
            return f"skill {name} is not approved now: {state.detail}"
        if state.state == "unknown":
            return f"skill {name} is not an approved skill ({state.detail})"
        return f"skill {name} is {state.state}: {state.detail}"
    return None


def _pre_tool_use(
    agent: AgentHooks,
    payload: Mapping[str, object],
    env: Mapping[str, str],
    store_path: Path | None,
    trust_file: Path | None,
    *,
    unknown_ok: bool = False,
) -> str | None:
    """None when the call may go on, else why it may not (drift, or an unknown skill).
    ``unknown_ok``: a skill name that resolves to no folder and no command passes."""
    from chimera_cards._runtime.skill_places import nested_patterns, skill_places
    from chimera_cards._runtime.tool_targets import AGENT, SKILL, TOOLS, tool_targets

    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not isinstance(payload.get("tool_input"), dict):
        raise UsageError("hook input has no tool_name and tool_input object")
    kind = TOOLS[agent.name].get(tool, ("", ()))[0]
    if not kind:
        return None
    cwd = _project_root(payload, env)
    also = [env["CLAUDE_PROJECT_DIR"]] if env.get("CLAUDE_PROJECT_DIR") else []
    # Only a call by skill name (Skill, or a subagent's preloaded skills) needs the nested
    # folders listed (a path names its own folder).
    places = skill_places(env, cwd, also=also, nested=kind in (SKILL, AGENT), walk_limit=20_000)
    targets = tool_targets(agent.name, payload, env, places, nested_patterns())
    if targets.missing and not (unknown_ok and not _is_command(targets.missing[0], places)):
        name = targets.missing[0]
        return f"skill {name} is in no skills folder chimera-cards checks; it is not approved"
    for judge in targets.judges:
        if judge.commands and os.path.isdir(judge.directory) and os.listdir(judge.directory):
            return (
                f"this call makes Claude Code list its commands again, and {judge.directory} "
                "holds commands, which are never approved"
            )
    judges = [j for j in targets.judges if not j.commands]
    if not judges:
        return None
    from chimera_cards._runtime import hook_memo
    from chimera_cards._store.location import existing_store_path

    store_file = existing_store_path(store_path)
    folders = _named_folders(judges)
    if folders is not None and hook_memo.recall(folders, store_file, trust_file) is not None:
        return None  # every folder hashes now to a bundle check called ok under this store
    before = hook_memo.fingerprint(store_file, trust_file)
    from chimera_cards._install.policy import trust_file_policy
    from chimera_cards._store.facade import Store

    policy = trust_file_policy(trust_file)
    judged: dict[str, str | None] = {}
    with Store(store_file, create=False) as store:
        for judge in judges:  # whichever one the agent reads must be approved
            why = _verdict(store, judge, policy, judged)
            if why is not None:
                return why
    if folders is not None:
        hook_memo.remember_folders(folders, judged, store_file, trust_file, before)
    return None


# A prompt's routes to a file or a skill that no tool call goes through. Claude Code: a leading
# ``/name`` loads that skill (or command) into the prompt, and ``@path`` attaches the file (a
# folder: what is in it). Gemini CLI: ``@path`` inlines the file, or every file of a folder or
# glob, read by its read_many_files tool called directly, so no BeforeTool hook runs for it; its
# BeforeAgent hook gets the prompt (measured with 0.61.0).
_SLASH = re.compile(r"\s*/([^\s/]+)")
_MENTION = re.compile(r'(?:^|\s)@(?:"([^"]+)"|(\S+))')


def _prompt_calls(prompt: str, agent: str, cwd: Path) -> list[tuple[dict, bool]]:
    """The tool calls a prompt amounts to, each with whether a name that resolves to no skill
    may pass (a leading ``/help`` is Claude Code's own command, not a skill)."""
    calls: list[tuple[dict, bool]] = []
    slash = _SLASH.match(prompt)
    if slash and agent == "claude":
        calls.append(({"tool_name": "Skill", "tool_input": {"skill": slash.group(1)}}, True))
    for quoted, plain in _MENTION.findall(prompt):
        path = (quoted or plain).split("#", 1)[0].rstrip(".,;:!?)")
        path = path.replace("\\ ", " ")
        if not path:
            continue
        if agent == "gemini":
            call = {"tool_name": "read_many_files", "tool_input": {"paths": [path]}}
        elif os.path.isdir(cwd / os.path.expanduser(path)):
            call = {"tool_name": "Grep", "tool_input": {"path": path, "pattern": "."}}
        else:
            call = {"tool_name": "Read", "tool_input": {"file_path": path}}
        calls.append((call, False))
    return calls


# Claude Code's memory files, read at the start of a session, and the ``@path`` imports in them
# (relative to the importing file, recursive to five levels): an import of a skill file puts
# its bytes in the first request with no tool call (measured with 2.1.332: a dropped skill's
# body imported by the project's CLAUDE.md reached the model with the hook installed).
_MEMORY_NAMES = ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md")
_IMPORT = re.compile(r"(?:^|\s)@((?:~|\.{1,2}|/)?[^\s`]+)")
_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.M | re.S)
_MAX_IMPORT_DEPTH = 5


def memory_imports(cwd: Path, env: Mapping[str, str]) -> list[Path]:
    """Every file Claude Code's memory files import from here, however deep (to five levels):
    the project's (``CLAUDE.md``, ``CLAUDE.local.md``, ``.claude/CLAUDE.md``, ``.claude/rules``)
    here and in every folder above, the user's and the managed one."""
    from chimera_cards._runtime.skill_places import claude_home

    roots: list[Path] = []
    for folder in (cwd, *cwd.parents):
        roots += [folder / name for name in _MEMORY_NAMES]
        roots += _rules(folder / ".claude" / "rules")
    home = claude_home(env)
    roots += [home / "CLAUDE.md", *_rules(home / "rules"), Path("/etc/claude-code/CLAUDE.md")]
    found: list[Path] = []
    seen: set[Path] = set()
    level = [r for r in roots if r.is_file()]
    for _ in range(_MAX_IMPORT_DEPTH):
        following: list[Path] = []
        for memory in level:
            real = Path(os.path.realpath(memory))
            if real in seen:
                continue
            seen.add(real)
            try:
                text = memory.read_bytes()[:1_000_000].decode("utf-8", "replace")
            except OSError:
                continue
            for value in _IMPORT.findall(_FENCE.sub("", text)):
                target = Path(memory.parent, os.path.expanduser(value.rstrip(".,;:!?)")))
                found.append(target)
                if target.is_file():
                    following.append(target)
        level = following
    return list(dict.fromkeys(found))


def _rules(folder: Path) -> list[Path]:
    try:
        return sorted(folder.rglob("*.md"))[:1000]
    except OSError:
        return []


def _user_prompt(
    agent: AgentHooks,
    payload: Mapping[str, object],
    env: Mapping[str, str],
    store_path: Path | None,
    trust_file: Path | None,
) -> str | None:
    """None when the prompt pulls in no skill bytes that are not approved, else why."""
    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise UsageError("hook input has no prompt string")
    cwd = _project_root(payload, env)
    for call, unknown_ok in _prompt_calls(prompt, agent.name, cwd):
        why = _pre_tool_use(
            agent, {**payload, **call}, env, store_path, trust_file, unknown_ok=unknown_ok
        )
        if why is not None:
            return why
    for path in memory_imports(cwd, env) if agent.name == "claude" else []:
        call = {"tool_name": "Read", "tool_input": {"file_path": str(path)}}
        why = _pre_tool_use(agent, {**payload, **call}, env, store_path, trust_file)
        if why is not None:
            return f"a CLAUDE.md memory file imports {path}: {why}"
    return None


def _is_command(name: str, places) -> bool:
    """Whether ``name`` (``plugin:name`` too) is a Claude Code command file or a plugin's."""
    return ":" in name or any(
        os.path.exists(Path(folder) / f"{name}.md") for folder in places.commands
    )


def _named_folders(judges: list[Judge]) -> list[tuple[str, str]] | None:
    """(folder, name) of every skill folder the judges cover, listed now; None when one covers
    a link (only check follows links, within its boundary)."""
    from chimera_cards._bundles.folderscan import skill_entries

    folders: list[tuple[str, str]] = []
    for judge in judges:
        if judge.name is not None:
            folders.append((str(judge.directory / judge.name), judge.name))
            continue
        try:
            entries = skill_entries(judge.directory)
        except OSError:
            return None
        if any(link for _, link in entries):
            return None
        folders += [(str(path), path.name) for path, _ in entries]
    return folders


def _session_start(
    agent: AgentHooks,
    payload: Mapping[str, object],
    env: Mapping[str, str],
    store_path: Path | None,
    trust_file: Path | None,
) -> str:
    from chimera_cards._install.policy import trust_file_policy
    from chimera_cards._install.verify import check
    from chimera_cards._runtime import hook_memo
    from chimera_cards._store.facade import Store
    from chimera_cards._store.location import existing_store_path

    root = _project_root(payload, env)
    directories = [d for d in _agent_dirs(agent, env, root) if d.is_dir()]
    if not directories:
        return ""
    store_file = existing_store_path(store_path)
    before = hook_memo.fingerprint(store_file, trust_file)
    with Store(store_file, create=False) as store:
        report = check(store, directories, trust_file_policy(trust_file))
    # The session's first skill call then finds its folder remembered (under the same rules as
    # a tool call's own answer: re-hashed on every call, any store write or TTL forgets it).
    ok = [s for s in report.states if s.ok and s.link is None and s.path]
    judged = {os.path.abspath(s.path): s.digest for s in ok}
    good = [(s.path, Path(s.path).name) for s in ok]
    hook_memo.remember_folders(good, judged, store_file, trust_file, before)
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
    agent: str = "claude",
    store_path: Path | None = None,
    trust_file: Path | None = None,
    fail_open: bool = False,
    event: str | None = None,
    env: Mapping[str, str] | None = None,
) -> HookOutcome:
    """The hook command's whole behaviour: never raises, always an outcome.

    Args:
        data: the hook input as read from stdin.
        agent: whose hook this is (``claude``, ``gemini``).
        store_path: the store (default: the usual one).
        trust_file: judge approvals against this trust file instead of the store's trust list.
        fail_open: a failure of the hook itself warns (exit 1) instead of blocking (exit 2).
        event: ``pre-tool-use`` (``BeforeTool`` for Gemini CLI), ``session-start`` or
            ``user-prompt`` (Claude Code's UserPromptSubmit, Gemini CLI's BeforeAgent: a
            leading ``/skill`` and each ``@path`` judged as the Skill, Read or search calls
            they stand for); None: the input's ``hook_event_name``.
        env: the environment (default ``os.environ``).
    Returns:
        Exit 0 (go on), 2 with one line for the model (blocked), or 1 (a warning, fail-open).
    """
    env = os.environ if env is None else env
    hooks = AGENT_HOOKS[agent]
    failure = WARN if fail_open else BLOCK
    prefix = "chimera-cards hook"
    quiet = "{}\n" if hooks.json_stdout else ""
    try:
        try:
            payload = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise UsageError(f"hook input is not JSON ({exc.__class__.__name__})") from None
        if not isinstance(payload, dict):
            raise UsageError("hook input is not a JSON object")
        kind = event or {
            hooks.pre_event: "pre-tool-use",
            "SessionStart": "session-start",
            "UserPromptSubmit": "user-prompt",
            "BeforeAgent": "user-prompt",
        }.get(str(payload.get("hook_event_name")), "pre-tool-use")
        if kind == "session-start":
            report = _session_start(hooks, payload, env, store_path, trust_file)
            if hooks.json_stdout:
                answer = {"hookSpecificOutput": {"additionalContext": report}} if report else {}
                return HookOutcome(0, stdout=json.dumps(answer) + "\n")
            return HookOutcome(0, stdout=report)
        if kind == "user-prompt":
            why = _user_prompt(hooks, payload, env, store_path, trust_file)
        else:
            why = _pre_tool_use(hooks, payload, env, store_path, trust_file)
    except ChimeraError as exc:
        return HookOutcome(failure, stderr=f"{prefix}: {exc}; {_verb(fail_open)}")
    except Exception as exc:  # fail closed: a crash must not let an unchecked skill through
        text = " ".join(str(exc).split()) or exc.__class__.__name__
        return HookOutcome(failure, stderr=f"{prefix}: failed ({text}); {_verb(fail_open)}")
    if why is None:
        return HookOutcome(0, stdout=quiet)
    return HookOutcome(BLOCK, stderr=f"{why} (chimera-cards check shows the difference)")


def _verb(fail_open: bool) -> str:
    return "not blocked (--fail-open)" if fail_open else "blocked"


def hook_commands(
    agent: str = "claude",
    *,
    store: Path | None = None,
    trust_file: Path | None = None,
    fail_open: bool = False,
) -> dict[str, str]:
    """The command line of each hook event, as written into settings.json.

    Without ``fail_open``, the PreToolUse command ends in ``|| exit 2``: if ``chimera-cards``
    cannot even start (not on PATH, a broken install), the shell's own failure blocks too,
    where the agent would otherwise let the call through.
    """
    hooks = AGENT_HOOKS[agent]
    extra = ""
    if store is not None:
        extra += f" --store {shlex.quote(str(Path(store).absolute()))}"
    if trust_file is not None:
        extra += f" --trust-file {shlex.quote(str(trust_file))}"
    tail = " --fail-open" if fail_open else " || exit 2"
    commands = {
        hooks.pre_event: f"{hooks.command} --event pre-tool-use{extra}{tail}",
        "SessionStart": f"{hooks.command} --event session-start{extra}",
    }
    # A prompt's /skill and @file load bytes with no tool call.
    prompt_event = "UserPromptSubmit" if agent == "claude" else "BeforeAgent"
    commands[prompt_event] = f"{hooks.command} --event user-prompt{extra}{tail}"
    return commands


def _ours(entry: object, command: str) -> bool:
    if not isinstance(entry, dict):
        return False
    hooks = entry.get("hooks")
    return isinstance(hooks, list) and any(
        isinstance(h, dict) and str(h.get("command", "")).startswith(command) for h in hooks
    )


def _read_settings(path: Path) -> dict:
    """The settings file as a JSON object ({} when there is none), or SettingsError."""
    if not (path.exists() or path.is_symlink()):
        return {}
    try:
        loaded = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read ({exc.strerror}); nothing written") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise SettingsError(f"{path}: cannot read it as JSON ({exc}); nothing written") from None
    if not isinstance(loaded, dict):
        raise SettingsError(f"{path}: not a JSON object; nothing written")
    return loaded


def install_hooks(
    settings_path: str | os.PathLike,
    agent: str = "claude",
    *,
    store: Path | None = None,
    trust_file: Path | None = None,
    fail_open: bool = False,
) -> list[str]:
    """Merge the tool, SessionStart (and Claude Code's prompt) hooks into a settings file.

    Every other key, event and hook is kept as it was; an entry of ours already there is
    replaced in place (so a re-run with other options updates it), never duplicated.

    Args:
        settings_path: ``.claude/settings.json`` (created, with its folder, when missing).
        agent: ``claude`` or ``gemini``.
        store, trust_file, fail_open: written into the hook commands.
    Returns:
        The events whose entry was added or changed (empty: the file already had them).
    Raises:
        SettingsError: the file is not valid JSON or not an object (it is left untouched).
    """
    path = Path(settings_path)
    if store is not None and not Path(store).is_file():
        raise UsageError(f"--store {store}: no store there; the hook would block every skill")
    if trust_file is not None:
        from chimera_cards._review.trustfile import read_trust_file

        read_trust_file(trust_file)  # refused now rather than at every tool call
    settings = _read_settings(path)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f'{path}: its "hooks" is not an object; nothing written')
    hooks_of = AGENT_HOOKS[agent]
    changed = []
    for event, command in hook_commands(
        agent, store=store, trust_file=trust_file, fail_open=fail_open
    ).items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise SettingsError(f"{path}: hooks.{event} is not a list; nothing written")
        # Claude Code counts a timeout in seconds, Gemini CLI in milliseconds.
        timeout = 60_000 if hooks_of.json_stdout else 60
        hook = {"type": "command", "command": command, "timeout": timeout}
        if hooks_of.name != "claude":
            hook = {"name": f"chimera-cards-{event}", **hook}
        entry: dict = {"hooks": [hook]}
        if event == hooks_of.pre_event:
            entry = {"matcher": hooks_of.matcher, **entry}
        mine = [i for i, e in enumerate(entries) if _ours(e, hooks_of.command)]
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
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SettingsError(f"{path.parent}: cannot create ({exc.strerror})") from None
        write_atomic(path, (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode())
    return changed
