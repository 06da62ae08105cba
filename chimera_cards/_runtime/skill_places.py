"""Every place an agent reads a skill from: the agents table's folders and what the agents add.

The agents table (``_install/agents.json``) names one project and one user folder per agent.
The agents read more than that, measured with the real CLIs (strace of Claude Code 2.1.328,
Codex CLI 0.171.0 and Gemini CLI 0.61.0):

- the project folder in the working directory *and every folder above it* (Claude Code stops
  at the git root and walks to ``/`` outside one; Codex does the same for ``.agents/skills``);
- project folders *nested below* the working directory (Claude Code loads
  ``packages/x/.claude/skills`` once a file under ``packages/x`` is touched);
- managed folders: ``/etc/claude-code/.claude/skills``, ``/etc/codex/skills``;
- the agent's own home besides the table's user folder: ``$CODEX_HOME/skills`` (Codex writes
  its bundled skills into ``.system`` there), Gemini CLI extensions'
  ``~/.gemini/extensions/*/skills``;
- Claude Code plugins: every install in ``<config>/plugins/installed_plugins.json`` holds skill
  folders (``skills/*``, folders its manifest lists, or the plugin root), named
  ``plugin:skill`` by the Skill tool.

Gemini CLI also lists the workspace's folder tree (names of every folder, skills folders of any
agent included) in its first request, so a view of "only approved bytes" covers every agent's
folders, not only the one being run.

``SkillPlaces`` holds skills *directories* (each sub-folder a skill, judged by ``check``) and
single skill *folders* (plugin skills). Nothing here reads a skill's bytes.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# Project folders the agents read besides the table's one (Gemini CLI reads both its own and
# .agents/skills; the table names the shared one).
EXTRA_PROJECT_DIRS = (".gemini/skills", ".codex/skills")
# Claude Code's older custom commands: one Markdown file each, listed to the model beside the
# skills (name and description, or the first line) and loaded by the Skill tool. No command can
# be an approved bundle, so exec keeps these folders empty unless asked to keep them.
COMMAND_DIR = ".claude/commands"
MANAGED_COMMAND_DIR = Path("/etc/claude-code/.claude/commands")
MANAGED_DIRS = (Path("/etc/claude-code/.claude/skills"), Path("/etc/codex/skills"))
# Folders Claude Code and Gemini CLI extensions keep beside skills that hold no skill.
_PLUGIN_SKIP = frozenset({".git", "node_modules", ".claude-plugin", "hooks", "commands"})
# How deep under a plugin's root a skill folder is looked for (skills/<name> is depth 2).
_PLUGIN_DEPTH = 3
# How many folders the walk for nested skills folders looks at before it stops.
MAX_NESTED_WALK = 200_000
_WALK_SKIP = frozenset({".git", "node_modules", ".hg", ".svn", "__pycache__", ".venv", "venv"})


@functools.cache
def _table_patterns() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(dotted project folders such as ``.claude/skills``, the others such as ``skills``)."""
    from chimera_cards._install.agents import AGENTS

    names = dict.fromkeys([*(a.project.rstrip("/") for a in AGENTS), *EXTRA_PROJECT_DIRS])
    dotted = tuple(n for n in names if n.startswith("."))
    plain = tuple(n for n in names if not n.startswith("."))
    return dotted, plain


def nested_patterns() -> tuple[str, ...]:
    """The project folders that count wherever they sit (``.claude/skills``, ``.agents/skills``,
    ...): a folder named so is a skills folder at any depth. Plain ones (``skills``) count only
    at the project root, where an agent looks for them."""
    return _table_patterns()[0]


@dataclass(frozen=True)
class PluginInstall:
    """One Claude Code plugin as installed: its name and the folder Claude Code loads it from."""

    name: str  # the plugin's name (before the @marketplace)
    key: str  # NAME@MARKETPLACE
    root: Path  # installPath

    def skill_folders(self) -> list[Path]:
        """Every folder under the plugin's root that holds a SKILL.md (the root itself too),
        whatever its manifest lists: a listed one is among them, and so is any the manifest
        might list after an update."""
        found: list[Path] = []
        stack = [(self.root, 0)]
        while stack:
            folder, depth = stack.pop()
            if os.path.isfile(folder / "SKILL.md") or os.path.isfile(folder / "skill.md"):
                found.append(folder)
                if depth:  # a skill's own sub-folders are its files; the root may hold skills/
                    continue
            if depth >= _PLUGIN_DEPTH:
                continue
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name not in _PLUGIN_SKIP and entry.is_dir(follow_symlinks=False):
                    stack.append((Path(entry.path), depth + 1))
        return sorted(found)


def claude_home(env: Mapping[str, str]) -> Path:
    """Claude Code's config folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    own = env.get("CLAUDE_CONFIG_DIR", "").strip()
    if own:
        return Path(own)
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".claude"


def plugin_installs(env: Mapping[str, str]) -> list[PluginInstall]:
    """Every plugin install Claude Code records, enabled or not (an enable is one settings line
    away, in a file the model can edit).

    Args:
        env: the environment (``CLAUDE_CONFIG_DIR``, ``HOME``).
    Returns:
        The installs whose folder exists; none when the record is missing or unreadable.
    """
    record = claude_home(env) / "plugins" / "installed_plugins.json"
    try:
        data = json.loads(record.read_bytes())
    except (OSError, ValueError):
        return []
    plugins = data.get("plugins") if isinstance(data, dict) else None
    if not isinstance(plugins, dict):
        return []
    found: list[PluginInstall] = []
    for key, installs in plugins.items():
        entries = installs if isinstance(installs, list) else [installs]
        for entry in entries:
            path = entry.get("installPath") if isinstance(entry, dict) else None
            if isinstance(key, str) and isinstance(path, str) and os.path.isdir(path):
                found.append(PluginInstall(key.split("@")[0], key, Path(path)))
    return found


def project_root(cwd: Path) -> Path:
    """The git work tree holding ``cwd`` (its top), else ``cwd`` itself."""
    for folder in (cwd, *cwd.parents):
        if os.path.exists(folder / ".git"):
            return folder
    return cwd


@dataclass
class SkillPlaces:
    """Skills directories (each sub-folder a skill) and single skill folders (plugin skills)."""

    dirs: list[Path] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    # plugin name -> its skill folders, for the Skill tool's ``plugin:skill``
    plugins: dict[str, list[Path]] = field(default_factory=dict)
    # Claude Code command folders (project here, above and nested; user; managed; plugins')
    commands: list[Path] = field(default_factory=list)
    walk_stopped: bool = False
    _seen: set[str] = field(default_factory=set, repr=False)

    def add_dir(self, path: Path) -> None:
        key = str(path)
        if key not in self._seen:
            self._seen.add(key)
            self.dirs.append(path)


def _user_dirs(env: Mapping[str, str]) -> list[Path]:
    from chimera_cards._install.agents import AGENTS, user_dir
    from chimera_cards.errors import UsageError

    places: list[Path] = []
    for agent in AGENTS:
        if agent.user is not None:
            with contextlib.suppress(UsageError):  # a user folder under an unset variable
                places.append(user_dir(agent, env))
    codex = env.get("CODEX_HOME", "").strip()
    home = env.get("HOME", "").strip()
    home_path = Path(home) if home else Path.home()
    places.append((Path(codex) if codex else home_path / ".codex") / "skills")
    extensions = home_path / ".gemini" / "extensions"
    with contextlib.suppress(OSError):
        places += [Path(e.path) / "skills" for e in os.scandir(extensions) if e.is_dir()]
    return places


def _nested(root: Path, patterns: Iterable[str], limit: int) -> tuple[list[Path], bool]:
    """Every folder below ``root`` named like a dotted project folder, and whether the walk
    stopped at ``limit`` folders before it was done."""
    wanted = {tuple(p.split("/")) for p in patterns}
    firsts = {parts[0] for parts in wanted}
    found: list[Path] = []
    seen = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        seen += 1
        if seen > limit:
            return found, True
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False) or entry.name in _WALK_SKIP:
                continue
            if entry.name in firsts:
                for parts in wanted:
                    if parts[0] == entry.name:
                        candidate = Path(entry.path, *parts[1:])
                        if candidate.is_dir():
                            found.append(candidate)
            stack.append(Path(entry.path))
    return found, False


def skill_places(
    env: Mapping[str, str],
    cwd: str | os.PathLike,
    *,
    also: Iterable[str | os.PathLike] = (),
    nested: bool = True,
    plugin_dirs: Iterable[str | os.PathLike] = (),
    walk_limit: int = MAX_NESTED_WALK,
) -> SkillPlaces:
    """Every existing skills directory and plugin skill folder any agent reads from here.

    Args:
        env: the environment (``HOME``, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``XDG_*``).
        cwd: where the agent starts.
        also: more starting folders (a hook: where the session started, besides the ``cwd``
            the model moved to).
        nested: also walk below the project root for nested project folders.
        plugin_dirs: plugin folders given on the command line (Claude Code's ``--plugin-dir``).
        walk_limit: folders the nested walk looks at, at most.
    Returns:
        The places, each directory once (as found, not resolved), existing ones only.
    """
    dotted, plain = _table_patterns()
    places = SkillPlaces()
    starts = list(dict.fromkeys(Path(os.path.abspath(p)) for p in (cwd, *also)))
    roots: list[Path] = []
    for start in starts:
        root = project_root(start)
        roots.append(root)
        for folder in (start, *start.parents):
            for pattern in dotted:
                places.add_dir(folder / pattern)
        for pattern in plain:
            places.add_dir(root / pattern)
            places.add_dir(start / pattern)
    commands = [folder / COMMAND_DIR for start in starts for folder in (start, *start.parents)]
    if nested:
        for root in dict.fromkeys(roots):
            found, stopped = _nested(root, (*dotted, COMMAND_DIR), walk_limit)
            for folder in found:
                if folder.as_posix().endswith(COMMAND_DIR):
                    commands.append(folder)
                else:
                    places.add_dir(folder)
            places.walk_stopped = places.walk_stopped or stopped
    commands += [claude_home(env) / "commands", MANAGED_COMMAND_DIR]
    for folder in [*_user_dirs(env), *MANAGED_DIRS]:
        places.add_dir(folder)
    places.dirs = [d for d in places.dirs if os.path.isdir(d)]
    installs = plugin_installs(env)
    installs += [PluginInstall(Path(p).name, str(p), Path(p)) for p in plugin_dirs]
    for install in installs:
        commands.append(install.root / "commands")
        for folder in install.skill_folders():
            if folder not in places.folders:
                places.folders.append(folder)
            places.plugins.setdefault(install.name, []).append(folder)
    places.commands = [c for c in dict.fromkeys(commands) if os.path.isdir(c)]
    return places
