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
# How many folders a walk (nested project folders, a plugin's tree) looks at before it stops.
# Claude Code loads a plugin's listed skill folder at any depth, and a nested
# ``.claude/skills`` under any folder a touched file sits in (``node_modules`` and ``.venv``
# included, measured), so no folder name is skipped and a walk that stops is reported.
MAX_NESTED_WALK = 200_000
MAX_PLUGIN_WALK = 20_000
# Environment variables whose value is a folder of plugins or skills the agent loads (Claude
# Code's CLAUDE_CODE_PLUGIN_DIRS, CLAUDE_CODE_PLUGIN_SEED_DIR, ...): every folder under one
# that holds a SKILL.md is judged, whatever the variable is called.
_PLUGIN_VAR_WORDS = ("PLUGIN", "SKILL", "EXTENSION")
# Environment variables that move an agent's home (GEMINI_CLI_HOME, CODEX_HOME,
# CLAUDE_CONFIG_DIR, ...): every user folder of every agent is looked for under each.
_HOME_VAR_ENDS = ("_HOME", "_CONFIG_DIR", "_HOME_DIR")


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

    def skill_folders(self, limit: int = MAX_PLUGIN_WALK) -> tuple[list[Path], bool]:
        """Every folder under the plugin's root that holds a SKILL.md (the root itself too),
        whatever its manifest lists and however deep (a listed path may sit anywhere, under
        ``hooks/`` or ``node_modules/`` too): a listed one is among them, and so is any the
        manifest might list after an update. Linked folders are followed (the agent follows
        them), each real folder once.

        Returns:
            (the folders, whether the walk stopped at ``limit`` folders before it was done).
        """
        found: list[Path] = []
        stack = [(self.root, 0)]
        seen: set[str] = set()
        while stack:
            folder, depth = stack.pop()
            real = os.path.realpath(folder)
            if real in seen:
                continue
            seen.add(real)
            if len(seen) > limit:
                return sorted(found), True
            if os.path.isfile(folder / "SKILL.md") or os.path.isfile(folder / "skill.md"):
                found.append(folder)
                if depth:  # a skill's own sub-folders are its files; the root may hold skills/
                    continue
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name != ".git" and _is_dir(entry):
                    stack.append((Path(entry.path), depth + 1))
        return sorted(found), False


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()  # follows a link: the agents do
    except OSError:
        return False


def claude_home(env: Mapping[str, str]) -> Path:
    """Claude Code's config folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    own = env.get("CLAUDE_CONFIG_DIR", "").strip()
    if own:
        return Path(own)
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".claude"


def plugin_installs(env: Mapping[str, str], config: Path | None = None) -> list[PluginInstall]:
    """Every plugin install Claude Code records, enabled or not (an enable is one settings line
    away, in a file the model can edit).

    Args:
        env: the environment (``CLAUDE_CONFIG_DIR``, ``HOME``).
        config: read this config folder's record instead of ``claude_home(env)``'s.
    Returns:
        The installs whose folder exists; none when the record is missing or unreadable.
    """
    record = (config or claude_home(env)) / "plugins" / "installed_plugins.json"
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


def marketplace_roots(config: Path) -> list[PluginInstall]:
    """Every marketplace Claude Code knows, as one plugin-like root each.

    Claude Code loads an installed plugin's skills from its marketplace's folder, not from the
    cache copy, when the marketplace is a local folder (measured with 2.1.332: a listed skill's
    base directory is the marketplace's ``evilplugin/hooks/evil-skill``). Every folder under a
    known marketplace's location (``known_marketplaces.json``'s ``installLocation``, and the
    clones in ``plugins/marketplaces``) that holds a SKILL.md is therefore judged.
    """
    found: list[Path] = []
    try:
        data = json.loads((config / "plugins" / "known_marketplaces.json").read_bytes())
    except (OSError, ValueError):
        data = {}
    for entry in data.values() if isinstance(data, dict) else ():
        location = entry.get("installLocation") if isinstance(entry, dict) else None
        if isinstance(location, str) and os.path.isdir(location):
            found.append(Path(location))
    with contextlib.suppress(OSError):
        found += [Path(e.path) for e in os.scandir(config / "plugins" / "marketplaces")]
    roots = [f for f in dict.fromkeys(found) if os.path.isdir(f)]
    return [PluginInstall("@" + root.name, str(root), root) for root in roots]


def _plugin_roots(
    env: Mapping[str, str], homes: list[Path], starts: list[Path], named: list
) -> list[PluginInstall]:
    """Every plugin-like root: Claude Code's installs and known marketplaces, the agents'
    plugin stores, a repository's own marketplace's local plugins, and ``named`` folders."""
    home_value = env.get("HOME", "").strip()
    home_path = Path(home_value) if home_value else Path.home()
    agent_homes = [claude_home(env), home_path / ".codex", home_path / ".gemini"]
    configs = [*agent_homes, *homes, *(home / ".claude" for home in homes)]
    installs: list[PluginInstall] = []
    for config in dict.fromkeys(configs):
        installs += plugin_installs(env, config) + marketplace_roots(config)
        installs += _plugin_stores(config)
    for start in starts:
        installs += repo_marketplace_plugins(start)
    installs += [PluginInstall(Path(p).name, str(p), Path(p)) for p in named]
    return installs


def _plugin_stores(config: Path) -> list[PluginInstall]:
    """An agent home's plugin store as one plugin-like root each: ``plugins`` (Claude Code's
    cache and marketplace clones, Codex CLI's ``plugins/cache``) and Codex CLI's
    ``.tmp/plugins``. Every SKILL.md folder in them is judged, installed or left behind."""
    stores = [config / "plugins", config / ".tmp" / "plugins"]
    return [PluginInstall("@" + str(s), str(s), s) for s in stores if os.path.isdir(s)]


def repo_marketplace_plugins(start: Path) -> list[PluginInstall]:
    """Plugins a repository's own marketplace (``.agents/plugins/marketplace.json``, Codex
    CLI; ``.claude-plugin/marketplace.json``, Claude Code) names by a local path, in the
    start folder and every folder above it: each such path is a plugin root."""
    found: list[PluginInstall] = []
    for folder in (start, *start.parents):
        for manifest in (
            folder / ".agents" / "plugins" / "marketplace.json",
            folder / ".claude-plugin" / "marketplace.json",
        ):
            try:
                data = json.loads(manifest.read_bytes())
            except (OSError, ValueError):
                continue
            for value in _strings(data):
                if value.startswith(("./", "../")) and os.path.isdir(folder / value):
                    root = Path(os.path.normpath(folder / value))
                    found.append(PluginInstall("@" + str(root), str(root), root))
    return found


def _strings(data: object) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for v in data.values() for s in _strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in _strings(v)]
    return []


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
    places += _extension_skills(home_path / ".gemini" / "extensions")
    return places


def _extension_skills(extensions: Path) -> list[Path]:
    """Each Gemini CLI extension's ``skills`` folder: in the extension's folder, or, for a
    linked one (``gemini extensions link``), in the folder its install record names."""
    places: list[Path] = []
    try:
        found = [Path(e.path) for e in os.scandir(extensions) if _is_dir(e)]
    except OSError:
        return places
    for extension in found:
        places.append(extension / "skills")
        try:
            record = json.loads((extension / ".gemini-extension-install.json").read_bytes())
        except (OSError, ValueError):
            continue
        source = record.get("source") if isinstance(record, dict) else None
        if isinstance(source, str) and source:
            places.append(Path(source) / "skills")
    return places


def _folders_named(value: str) -> list[Path]:
    """The existing folders a value names: itself, or its ``:``/``,``-separated parts."""
    parts = dict.fromkeys([value, *value.split(os.pathsep), *value.split(",")])
    return [Path(p.strip()) for p in parts if p.strip() and os.path.isdir(p.strip())]


def _env_file(path: Path) -> list[tuple[str, str]]:
    """``KEY=VALUE`` lines of a dotenv file (``export`` and quotes allowed), none if unreadable.
    Only candidate folders are taken from them, so a line read too generously costs a stat."""
    try:
        text = path.read_text("utf-8", "replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines()[:2000]:
        key, sep, value = line.strip().removeprefix("export ").partition("=")
        if sep and key.strip() and not key.startswith("#"):
            found.append((key.strip(), value.strip().strip("'\"")))
    return found


def _settings_env(path: Path) -> list[tuple[str, str]]:
    """The ``env`` object of an agent's JSON settings file (Claude Code sets these variables
    for its session), none if unreadable."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return []
    own = data.get("env") if isinstance(data, dict) else None
    if not isinstance(own, dict):
        return []
    return [(str(k), v) for k, v in own.items() if isinstance(v, str)]


def agent_variables(env: Mapping[str, str], starts: Iterable[Path]) -> list[tuple[str, str]]:
    """Every variable the agents will have: the environment, plus what they load themselves
    from files the project can write (Gemini CLI's ``.gemini/.env`` and ``.env`` here and in
    every folder above, and in the home; Claude Code's settings ``env``)."""
    home_value = env.get("HOME", "").strip()
    home = Path(home_value) if home_value else Path.home()
    found = list(env.items())
    folders = [f for start in starts for f in (start, *start.parents)]
    for folder in [*dict.fromkeys(folders), home]:
        found += _env_file(folder / ".gemini" / ".env") + _env_file(folder / ".env")
        for name in ("settings.json", "settings.local.json"):
            found += _settings_env(folder / ".claude" / name)
    found += _settings_env(claude_home(env) / "settings.json")
    found += _settings_env(Path("/etc/claude-code/managed-settings.json"))
    return found


def _moved_homes(variables: Iterable[tuple[str, str]]) -> list[Path]:
    """Folders a variable makes an agent's home or config folder."""
    homes: list[Path] = []
    for name, value in variables:
        if name != "HOME" and name.upper().endswith(_HOME_VAR_ENDS) and value:
            homes += _folders_named(value)
    return list(dict.fromkeys(homes))


def _env_plugin_roots(variables: Iterable[tuple[str, str]]) -> list[Path]:
    roots: list[Path] = []
    for name, value in variables:
        if any(word in name.upper() for word in _PLUGIN_VAR_WORDS) and value:
            roots += _folders_named(value)
    return list(dict.fromkeys(roots))


def plugin_like(folder: Path) -> bool:
    """Whether an agent given ``folder`` as a plugin would load a skill from it."""
    return any(os.path.exists(folder / name) for name in (".claude-plugin", "skills", "SKILL.md"))


def _nested(root: Path, patterns: Iterable[str], limit: int) -> tuple[list[Path], bool]:
    """Every folder below ``root`` named like a dotted project folder, and whether the walk
    stopped at ``limit`` folders before it was done."""
    wanted = {tuple(p.split("/")) for p in patterns}
    firsts = {parts[0] for parts in wanted}
    found: list[Path] = []
    seen = 0
    linked: set[str] = set()
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
            if entry.name == ".git" or not _is_dir(entry):
                continue
            if entry.is_symlink():  # followed, each real folder once
                real = os.path.realpath(entry.path)
                if real in linked:
                    continue
                linked.add(real)
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
    walk_limit: int | None = None,
) -> SkillPlaces:
    """Every existing skills directory and plugin skill folder any agent reads from here.

    Args:
        env: the environment (``HOME``, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``XDG_*``).
        cwd: where the agent starts.
        also: more starting folders (a hook: where the session started, besides the ``cwd``
            the model moved to).
        nested: also walk below the project root for nested project folders.
        plugin_dirs: plugin folders given on the command line (Claude Code's ``--plugin-dir``).
        walk_limit: folders the nested walk looks at, at most (default ``MAX_NESTED_WALK``).
    Returns:
        The places, each directory once (as found, not resolved), existing ones only. Folders
        an environment variable names count too: a moved home (``*_HOME``, ``*_CONFIG_DIR``:
        every agent's user folders under it, its own ``skills``, its Claude Code plugins) and
        a plugin or skill folder (a name with PLUGIN, SKILL or EXTENSION: every SKILL.md folder
        under it), whether set in ``env`` or in a file the agent loads (``agent_variables``).
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
            limit = MAX_NESTED_WALK if walk_limit is None else walk_limit
            found, stopped = _nested(root, (*dotted, COMMAND_DIR), limit)
            for folder in found:
                if folder.as_posix().endswith(COMMAND_DIR):
                    commands.append(folder)
                else:
                    places.add_dir(folder)
            places.walk_stopped = places.walk_stopped or stopped
    commands += [claude_home(env) / "commands", MANAGED_COMMAND_DIR]
    variables = agent_variables(env, starts)
    homes = _moved_homes(variables)
    user_dirs = _user_dirs(env)
    for home in homes:
        moved = {**env, "HOME": str(home), "CODEX_HOME": "", "CLAUDE_CONFIG_DIR": ""}
        user_dirs += [*_user_dirs(moved), home / "skills", *_extension_skills(home / "extensions")]
        commands.append(home / "commands")
    for folder in [*user_dirs, *MANAGED_DIRS]:
        places.add_dir(folder)
    places.dirs = [d for d in places.dirs if os.path.isdir(d)]
    named = [*plugin_dirs, *_env_plugin_roots(variables)]
    for install in _plugin_roots(env, homes, starts, named):
        commands.append(install.root / "commands")
        folders, stopped = install.skill_folders()
        places.walk_stopped = places.walk_stopped or stopped
        for folder in folders:
            if folder not in places.folders:
                places.folders.append(folder)
            places.plugins.setdefault(install.name, []).append(folder)
    places.commands = [c for c in dict.fromkeys(commands) if os.path.isdir(c)]
    return places
