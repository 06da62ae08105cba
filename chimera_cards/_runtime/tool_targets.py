"""Which skill folders an agent's tool call can read: the hook's question before it judges.

A call names paths in its own way; each tool is mapped to the paths it reads:

- ``Skill`` / ``activate_skill``: a skill by name. ``plugin:skill`` is that plugin's own folder
  where Claude Code installed it (never a project skill of the same short name); a plain name
  is every skills folder that holds a folder of that name (whichever the agent loads).
- ``Read`` / ``read_file`` / ``read_many_files``: a file inside a skill folder names that skill.
  So does a file another file tool touches (``Write``, ``Edit``, ``MultiEdit``,
  ``NotebookEdit``; ``write_file``, ``replace``): an edit's answer quotes the file.
- Every file tool and search also *discovers*: Claude Code loads the skills of a project folder
  (``sub/.claude/skills``) below where the session started once a file tool touches a path under
  ``sub`` (measured with 2.1.332: a folder made mid-session by ``mkdir``, ``git checkout`` or
  ``tar x`` was listed to the model, description and all, right after a ``Read`` or ``Write`` of
  ``sub/notes.txt``, never before). Each such folder between the path and the session's start
  folder is judged whole, so the call that would load an unapproved one is blocked. A call
  that discovers one also makes Claude Code list every skill and command again (a user folder
  or command made mid-session was listed after a ``Read`` under an approved nested folder), so
  then every skills folder of the session and every command folder is judged too.
- ``Agent`` / ``Task`` (Claude Code starting a subagent): a subagent's definition
  (``.claude/agents/NAME.md``, a user's or a plugin's ``agents/``) may list ``skills:`` that
  Claude Code injects whole into the subagent's first request, with no Skill call for a hook to
  see (measured with 2.1.332: a dropped-in and a drifted skill's bodies reached the model that
  way with the hook installed). Each listed skill is judged as a Skill call of that name.
- ``Grep`` / ``Glob`` / ``search_file_content`` / ``glob`` / ``list_directory``: a search over a
  folder reads every skill folder below it (Claude Code's Grep searches hidden folders, measured:
  ``.claude/skills`` bodies came back from a Grep with no path).
- ``Bash`` / ``run_shell_command``: the paths its words name, expanded as the shell would
  (``~``, ``$HOME``, globs, relative to the working directory): a word inside a skill folder names
  that skill; a word that is a skills folder or its agent folder (``.claude``) names all of it;
  a search, list or copy tool (``grep -r``, ``rg``, ``find``, ``ls -R``, ``tar``, ``cp -r``,
  ``git grep``, ...) over a folder that holds skills folders, or with no folder (the working
  directory), names all of them.

What Bash cannot be judged for: a shell command is a program. A path computed at run time
(``cat $(echo LmNsYXVkZQ== | base64 -d)/skills/x/SKILL.md``, a variable set earlier in the
command, ``python -c`` opening a file, ``git show HEAD:.claude/skills/x/SKILL.md``) is not a
word of the command, so the hook cannot see it; ``chimera-cards exec`` closes that route (the
bytes are not in the agent's file system at all). The rules above catch every literal route.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from chimera_cards.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from chimera_cards._runtime.skill_places import SkillPlaces


# Per agent: tool -> (kind, input keys that may hold its argument).
SKILL, READ, SEARCH, SHELL, AGENT = "skill", "read", "search", "shell", "agent"
TOOLS: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {
    "claude": {
        "Skill": (SKILL, ("skill", "command", "skill_name")),
        "Read": (READ, ("file_path",)),
        "Write": (READ, ("file_path",)),
        "Edit": (READ, ("file_path",)),
        "MultiEdit": (READ, ("file_path",)),
        "NotebookEdit": (READ, ("notebook_path",)),
        "Grep": (SEARCH, ("path",)),
        "Glob": (SEARCH, ("path",)),
        "Bash": (SHELL, ("command",)),
        "Agent": (AGENT, ("subagent_type",)),
        "Task": (AGENT, ("subagent_type",)),
    },
    "gemini": {
        "activate_skill": (SKILL, ("name",)),
        "read_file": (READ, ("file_path", "absolute_path", "path")),
        "write_file": (READ, ("file_path", "absolute_path", "path")),
        "replace": (READ, ("file_path", "absolute_path", "path")),
        "read_many_files": (SEARCH, ("paths", "include")),
        "list_directory": (SEARCH, ("dir_path", "path")),
        "glob": (SEARCH, ("dir_path", "path")),
        "search_file_content": (SEARCH, ("dir_path", "path")),
        "grep_search": (SEARCH, ("dir_path", "path")),
        "run_shell_command": (SHELL, ("command",)),
    },
}

# Programs that read a whole tree (by default the working directory).
_RECURSIVE = frozenset(
    {"rg", "ag", "ack", "find", "fd", "fdfind", "tree", "tar", "zip", "7z", "rsync", "du", "ugrep"}
)
_RECURSIVE_WITH_FLAG = {
    "grep": ("-r", "-R", "--recursive", "--dereference-recursive", "-d"),
    "egrep": ("-r", "-R", "--recursive"),
    "fgrep": ("-r", "-R", "--recursive"),
    "ls": ("-R", "--recursive"),
    "cp": ("-r", "-R", "-a", "--recursive", "--archive"),
    "scp": ("-r",),
}
_PATTERN_FIRST = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "ugrep", "fd", "fdfind", "git grep"}
)
_GIT_TREE = frozenset({"grep", "ls-files", "status", "diff", "show", "log", "archive", "stash"})
# Words before the program that do not change which program runs.
_PREFIX = frozenset({"sudo", "env", "time", "nice", "nohup", "xargs", "command", "exec", "timeout"})
_OPERATORS = frozenset({"|", "||", "&", "&&", ";", ";;", "(", ")", "|&", "\n"})
_GLOB = re.compile(r"[*?\[]")
_VAR = re.compile(r"\$(\w+)|\$\{(\w+)\}")
MAX_GLOB_PATHS = 10_000
# A path-like run inside a longer word that names a skills folder or a skill file.
_EMBEDDED = re.compile(
    r"""(?:~|\$\{?\w+\}?|\.{1,2}|/)?[\w./~$*?{}-]*(?:skills|SKILL\.md)[\w./*?-]*""", re.I
)


@dataclass(frozen=True)
class Judge:
    """One thing to judge: the skill ``name`` in the skills folder ``directory``, or (name None)
    every skill in it."""

    directory: Path
    name: str | None = None
    commands: bool = False  # a command folder: listed like skills, never approved
    discovery: bool = False  # a project folder a file tool makes the agent load


@dataclass
class ToolTargets:
    """What a call reads: skill folders to judge, and skills it names that are nowhere."""

    judges: list[Judge]
    missing: list[str]  # a Skill call's name found in no folder (so not approved)

    def __bool__(self) -> bool:
        return bool(self.judges or self.missing)


def _text(tool_input: Mapping[str, object], keys: tuple[str, ...]) -> list[str]:
    values: list[str] = []
    for key in keys:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            values.append(value)
        elif isinstance(value, list):
            values += [v for v in value if isinstance(v, str) and v]
    return values


def _paths(path: Path) -> list[Path]:
    """The path as written (normalised) and with links resolved."""
    plain = Path(os.path.normpath(path))
    real = Path(os.path.realpath(path))
    return [plain] if plain == real else [plain, real]


def _in_skill(parts: tuple[str, ...], at: int, path: Path) -> bool:
    """Whether ``parts[at]`` (the first part below a skills folder) is a skill folder that
    ``path`` reaches: ``path`` lies deeper, or is that folder itself."""
    below = len(parts) - at
    return below >= 2 or (below == 1 and os.path.isdir(path))


def _agent_folder_of(directory: Path) -> Path | None:
    """``.claude`` for ``.claude/skills``: a word naming it reads the skills folder inside."""
    parent = directory.parent
    return parent if parent.name.startswith(".") else None


class _Places:
    """The places, with the lookups the rules need."""

    def __init__(self, places: SkillPlaces, dotted: tuple[str, ...]) -> None:
        self.places = places
        self.dirs = [(d, _paths(d)) for d in places.dirs]
        self.folders = [(f, _paths(f)) for f in places.folders]
        self.dotted = [tuple(p.split("/")) for p in dotted]

    def inside(self, path: Path) -> Judge | None:
        """The skill folder ``path`` is in (or is), if any. A file directly in a skills folder
        (its README, an index) is no skill's."""
        for candidate in _paths(path):
            parts = candidate.parts
            for pattern in self.dotted:
                n = len(pattern)
                for i in range(len(parts) - n):
                    if parts[i : i + n] == pattern and _in_skill(parts, i + n, candidate):
                        return Judge(Path(*parts[: i + n]), parts[i + n])
            for directory, forms in self.dirs:
                for form in forms:
                    if candidate.is_relative_to(form) and candidate != form:
                        rest = candidate.relative_to(form).parts
                        if _in_skill(rest, 0, candidate):
                            return Judge(directory, rest[0])
            for folder, forms in self.folders:
                for form in forms:
                    if candidate.is_relative_to(form):
                        return Judge(folder.parent, folder.name)
        return None

    def below(self, path: Path, *, walk: bool) -> list[Judge]:
        """Every skills folder (and plugin skill) at or below ``path``: all of each."""
        found: list[Judge] = []
        for candidate in _paths(path):
            for directory, forms in self.dirs:
                if any(f.is_relative_to(candidate) for f in forms):
                    found.append(Judge(directory))
            for folder, forms in self.folders:
                if any(f.is_relative_to(candidate) for f in forms):
                    found.append(Judge(folder.parent, folder.name))
            if walk and os.path.isdir(candidate):
                from chimera_cards._runtime.skill_places import _nested

                nested, _ = _nested(candidate, ["/".join(p) for p in self.dotted], 20_000)
                found += [Judge(d) for d in nested]
        return list(dict.fromkeys(found))

    def discovered(self, path: Path, start: Path, home: Path) -> list[Judge]:
        """Every project skills folder a file tool touching ``path`` makes the agent load: one
        in ``path`` (a folder) or in any folder above it, up to where the session started
        (those at the start and above were loaded at start) and never the home (whose
        ``.claude/skills`` is the user folder, also loaded at start)."""
        found: list[Judge] = []
        for candidate in _paths(path):
            folder = candidate if os.path.isdir(candidate) else candidate.parent
            for above in (folder, *folder.parents):
                if start.is_relative_to(above) or above == home:
                    break
                for pattern in self.dotted:
                    inner = Path(above, *pattern)
                    if os.path.isdir(inner):
                        found.append(Judge(inner, discovery=True))
        return found

    def agent_folder(self, path: Path) -> list[Judge]:
        """All of each skills folder whose agent folder (``.claude``) ``path`` is."""
        found = []
        for candidate in _paths(path):
            for directory, forms in self.dirs:
                if any(_agent_folder_of(f) == candidate for f in forms):
                    found.append(Judge(directory))
            for pattern in self.dotted:
                if len(pattern) > 1 and candidate.name == pattern[0]:
                    inner = Path(candidate, *pattern[1:])
                    if inner.is_dir():
                        found.append(Judge(inner))
        return found


def _expand(word: str, env: Mapping[str, str], cwd: Path) -> list[Path]:
    """The paths a shell word can name: ``~`` and ``$VAR`` expanded, globs matched."""
    if word.startswith("-"):
        _, equals, value = word.partition("=")
        if not equals:
            return []
        word = value
    word = _VAR.sub(lambda m: env.get(m.group(1) or m.group(2), ""), word)
    if word == "~" or word.startswith("~/"):
        word = env.get("HOME", "") + word[1:]
    if not word or "://" in word:
        return []
    path = Path(word) if os.path.isabs(word) else cwd / word
    if _GLOB.search(word):
        matched = []
        for i, item in enumerate(glob.iglob(str(path), recursive=True, include_hidden=True)):
            if i >= MAX_GLOB_PATHS:
                break
            matched.append(Path(item))
        # A glob that matches nothing still names where it looks.
        return matched or [Path(_GLOB.split(str(path), 1)[0] or "/").parent]
    return [path]


def bash_paths(command: str, env: Mapping[str, str], cwd: Path) -> tuple[list[Path], bool]:
    """The paths a shell command's words name, and whether it runs a tree-reading program.

    Args:
        command: the command line.
        env: for ``~`` and ``$VAR``.
        cwd: what relative words are relative to (``cd DIR`` moves it for the words after).
    Returns:
        (paths, recursive): ``recursive`` when a program reads a tree (``grep -r``, ``rg``,
        ``find``, ``git grep``, ...); its tree is the working directory when no path is given.
    """
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:  # an unclosed quote: the words as whitespace splits them
        words = command.split()
    paths: list[Path] = []
    recursive = False
    segment: list[str] = []
    for word in [*words, ";"]:
        if word not in _OPERATORS and not set(word) <= set("|&;()<>"):
            segment.append(word)
            continue
        if segment:
            found, reads_tree, cwd = _segment(segment, env, cwd)
            paths += found
            recursive = recursive or reads_tree
        segment = []
    return paths, recursive


def _segment(words: list[str], env: Mapping[str, str], cwd: Path) -> tuple[list[Path], bool, Path]:
    """One simple command: its paths, whether it reads a tree, and the directory after it."""
    i = 0
    while i < len(words) and ("=" in words[i] and not words[i].startswith("-")):
        i += 1  # VAR=value before the program
    while i < len(words) and os.path.basename(words[i]) in _PREFIX:
        i += 1
        while i < len(words) and words[i].startswith("-"):
            i += 1
    if i >= len(words):
        return [], False, cwd
    program = os.path.basename(words[i])
    args = words[i + 1 :]
    paths = [p for word in args for p in _expand(word, env, cwd)]
    # A path inside a word: code run by an interpreter (python -c "open('.claude/skills/…')"),
    # a command substitution or a quoted script (sh -c 'cat …').
    paths += [
        p for word in args for inner in _EMBEDDED.findall(word) for p in _expand(inner, env, cwd)
    ]
    flags = [a for a in args if a.startswith("-")]
    reads_tree = program in _RECURSIVE
    if program in _RECURSIVE_WITH_FLAG:
        wanted = _RECURSIVE_WITH_FLAG[program]
        reads_tree = any(
            f in wanted
            or (not f.startswith("--") and any(w[1] in f[1:] for w in wanted if len(w) == 2))
            for f in flags
        )
    positional = [a for a in args if not a.startswith("-")]
    if program == "git":
        sub = positional[0] if positional else ""
        reads_tree = sub in _GIT_TREE
        positional = positional[1:]
        program = f"git {sub}"
    # The words before the first folder: a search pattern, for the grep family.
    skip = 1 if program in _PATTERN_FIRST else 0
    if reads_tree and not positional[skip:]:
        paths.append(cwd)  # a search with no folder searches the working directory
    if program == "cd" and paths:
        cwd = paths[0]
    return paths, reads_tree, cwd


def _skill_name(tool: str, value: str) -> tuple[str | None, str]:
    name = value.strip().lstrip("/")
    plugin, _, short = name.rpartition(":")
    if not short or "/" in short or "\\" in short or short.startswith(".") or short in ("..",):
        raise UsageError(f"{tool} call names {value!r}, which is no skill folder name")
    return (plugin or None), short


def _frontmatter_name(folder: Path) -> str | None:
    return _name_in(folder / "SKILL.md")


def _name_in(markdown: Path) -> str | None:
    """The ``name:`` a Markdown file's frontmatter gives, as the agent spells names."""
    try:
        with open(markdown, "rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    match = re.search(r"^name:\s*['\"]?([^'\"\n]+?)['\"]?\s*$", head, re.M)
    return re.sub(r"[^a-zA-Z0-9_-]", "-", match.group(1)) if match else None


def tool_targets(
    agent: str,
    payload: Mapping[str, object],
    env: Mapping[str, str],
    places: SkillPlaces,
    dotted: tuple[str, ...],
) -> ToolTargets:
    """The skill folders a tool call can read.

    Args:
        agent: ``claude`` or ``gemini`` (whose tool names the payload uses).
        payload: the PreToolUse / BeforeTool input.
        env: the environment (``HOME`` and the variables a shell word may name).
        places: every skills folder and plugin skill of this project and user.
        dotted: the project folder names that count at any depth (``.claude/skills``, ...).
    Returns:
        What to judge (empty: the call reads no skill).
    Raises:
        UsageError: the payload is not shaped as the agent documents it.
    """
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        raise UsageError("hook input has no tool_name and tool_input object")
    kind, keys = TOOLS[agent].get(tool, ("", ()))
    cwd = _cwd(payload, env)
    start = _start(payload, env)
    home = Path(env.get("HOME") or Path.home())
    lookup = _Places(places, dotted)
    if kind == SKILL:
        values = _text(tool_input, keys)
        if not values:
            raise UsageError(f"{tool} call without a skill name in tool_input")
        return _skill_targets(tool, values[0], lookup)
    if kind == AGENT:
        from chimera_cards._runtime.skill_places import claude_home

        # The project's folder and every one above it, and the user's (which may be moved).
        own = [above / ".claude" / "agents" for above in (start, *start.parents)]
        own.append(claude_home(env) / "agents")
        return _subagent_targets(tool, _text(tool_input, keys), lookup, own)
    judges: list[Judge] = []
    if kind == READ:
        values = _text(tool_input, keys)
        if not values:
            raise UsageError(f"{tool} call without a file path")
        for value in values:
            found = lookup.inside(cwd / value)
            judges += [found] if found else []
            judges += lookup.discovered(cwd / value, start, home)
    elif kind == SEARCH:
        judges = _search_targets(tool, tool_input, keys, cwd, lookup)
        for value in _text(tool_input, keys) or [str(cwd)]:
            base = Path(_GLOB.split(str(cwd / value), 1)[0])
            judges += lookup.discovered(base, start, home)
    if any(j.discovery for j in judges):  # the agent lists all its skills again
        judges += [Judge(d) for d in places.dirs]
        judges += [Judge(c, commands=True) for c in places.commands]
    elif kind == SHELL:
        for command in _text(tool_input, keys):
            judges += _shell_targets(command, env, cwd, lookup)
    return ToolTargets(list(dict.fromkeys(judges)), [])


def _search_targets(
    tool: str,
    tool_input: Mapping[str, object],
    keys: tuple[str, ...],
    cwd: Path,
    lookup: _Places,
) -> list[Judge]:
    """A search (Grep, Glob, ...) reads every skill folder below where it searches."""
    judges: list[Judge] = []
    for value in _text(tool_input, keys) or [str(cwd)]:
        base = cwd / value
        if _GLOB.search(value):
            base = Path(_GLOB.split(str(base), 1)[0]).parent
        judges += _judges_for(lookup, base, walk=True)
    pattern = tool_input.get("pattern")
    if tool in ("Glob", "glob") and isinstance(pattern, str) and os.path.isabs(pattern):
        judges += _judges_for(lookup, Path(_GLOB.split(pattern, 1)[0]).parent, walk=True)
    return judges


def _shell_targets(command: str, env: Mapping[str, str], cwd: Path, lookup: _Places) -> list[Judge]:
    """A command reads the skill folders its words name, and every one below a tree it reads."""
    judges: list[Judge] = []
    paths, recursive = bash_paths(command, env, cwd)
    for path in paths:
        found = lookup.inside(path)
        if found:
            judges.append(found)
            continue
        judges += lookup.agent_folder(path)
        judges += [j for j in lookup.below(path, walk=False) if _names(j, path)]
        if recursive:
            judges += lookup.below(path, walk=True)
    return judges


def _names(judge: Judge, path: Path) -> bool:
    """Whether ``path`` is the skills folder ``judge`` covers (a word naming it lists it)."""
    return judge.name is None and any(p in _paths(judge.directory) for p in _paths(path))


def _judges_for(lookup: _Places, base: Path, *, walk: bool) -> list[Judge]:
    found = lookup.inside(base)
    return [found] if found else lookup.below(base, walk=walk)


def _skill_targets(tool: str, value: str, lookup: _Places) -> ToolTargets:
    plugin, short = _skill_name(tool, value)
    if plugin is not None:
        own = lookup.places.plugins.get(plugin, [])
        # A plugin from a local marketplace is loaded from the marketplace's folder, not the
        # cache copy: every known marketplace's skill of that name is judged too.
        markets = [f for k, fs in lookup.places.plugins.items() if k.startswith("@") for f in fs]
        folders = list(dict.fromkeys([*own, *markets]))
        chosen = [f for f in folders if f.name == short]
        chosen += [f for f in folders if f not in chosen and _frontmatter_name(f) == short]
        if not [f for f in chosen if f in own]:
            return ToolTargets([], [f"{plugin}:{short}"])
        return ToolTargets([Judge(f.parent, f.name) for f in chosen], [])
    judges = [
        Judge(directory, short)
        for directory, _ in lookup.dirs
        if os.path.lexists(directory / short)
    ]
    # A folder of another name whose SKILL.md says ``name: SHORT`` answers to it as well
    # (which of the two an agent loads is its choice): each one is judged.
    for directory, _ in lookup.dirs:
        try:
            entries = [e for e in os.scandir(directory) if e.name != short and e.is_dir()]
        except OSError:
            continue
        judges += [
            Judge(directory, e.name) for e in entries if _frontmatter_name(Path(e.path)) == short
        ]
    return ToolTargets(judges, [] if judges else [short])


def _subagent_targets(
    tool: str, values: list[str], lookup: _Places, own: list[Path]
) -> ToolTargets:
    """Every skill the named subagent's definitions preload, each judged as a Skill call. A
    built-in subagent (no definition file) preloads none."""
    if not values:
        return ToolTargets([], [])  # Claude Code's default subagent: no definition, no skills
    judges: list[Judge] = []
    missing: list[str] = []
    for definition in _subagent_files(tool, values[0], lookup, own):
        for name in _preloaded_skills(definition):
            found = _skill_targets(tool, name, lookup)
            judges += found.judges
            missing += found.missing
    return ToolTargets(list(dict.fromkeys(judges)), list(dict.fromkeys(missing)))


def _agent_folders(lookup: _Places, plugin: str | None, own: list[Path]) -> list[Path]:
    """Where Claude Code keeps subagent definitions: ``own`` (the project's, those above it,
    the user's), ``agents`` beside each ``.claude/skills`` and ``.claude/commands`` it reads
    (nested ones too), and a plugin's own ``agents`` folder for ``plugin:name``."""
    if plugin is not None:
        roots = [
            f.parent.parent if f.parent.name == "skills" else f.parent
            for f in lookup.places.plugins.get(plugin, [])
        ]
        roots += [c.parent for c in lookup.places.commands if c.parent.name == plugin]
        return list(dict.fromkeys(r / "agents" for r in roots))
    folders = [*own]
    folders += [d.parent / "agents" for d, _ in lookup.dirs if d.parent.name == ".claude"]
    folders += [c.parent / "agents" for c in lookup.places.commands if c.parent.name == ".claude"]
    return list(dict.fromkeys(folders))


def _subagent_files(tool: str, value: str, lookup: _Places, own: list[Path]) -> list[Path]:
    """Every definition that answers to ``value`` (``name`` or ``plugin:name``): a file
    ``NAME.md``, or any ``.md`` whose frontmatter says ``name: NAME`` (which one Claude Code
    picks is its choice, so each is read)."""
    plugin, _, short = value.strip().rpartition(":")
    if not short or "/" in short or short.startswith("."):
        raise UsageError(f"{tool} call names {value!r}, which is no subagent name")
    found: list[Path] = []
    for folder in _agent_folders(lookup, plugin or None, own):
        try:
            entries = sorted(e.path for e in os.scandir(folder) if e.name.endswith(".md"))
        except OSError:
            continue
        for path in entries:
            if Path(path).stem == short or _name_in(Path(path)) == short:
                found.append(Path(path))
    return found


def _preloaded_skills(definition: Path) -> list[str]:
    """The ``skills:`` a subagent definition lists (a YAML list, or names split by commas)."""
    try:
        text = definition.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if not text.startswith("---"):
        return []
    head, _, _ = text[3:].partition("\n---")
    import yaml

    try:
        data = yaml.safe_load(head)
    except yaml.YAMLError:
        # Unreadable frontmatter: each ``skills`` line's words still name skills, judged as such.
        match = re.search(r"^skills:\s*(.*(?:\n[ \t]+-.*)*)", head, re.M)
        return re.findall(r"[\w:.-]+", match.group(1)) if match else []
    skills = data.get("skills") if isinstance(data, dict) else None
    if isinstance(skills, str):
        return [s.strip() for s in skills.split(",") if s.strip()]
    if isinstance(skills, list):
        return [str(s).strip() for s in skills if str(s).strip()]
    return []


def _cwd(payload: Mapping[str, object], env: Mapping[str, str]) -> Path:
    # The payload's cwd follows `cd`; CLAUDE_PROJECT_DIR is where the session started.
    for value in (payload.get("cwd"), env.get("CLAUDE_PROJECT_DIR")):
        if isinstance(value, str) and value:
            return Path(value)
    return Path.cwd()


def _start(payload: Mapping[str, object], env: Mapping[str, str]) -> Path:
    # Where the session started: its project folders there and above were loaded at start.
    for value in (env.get("CLAUDE_PROJECT_DIR"), env.get("GEMINI_PROJECT_DIR"), payload.get("cwd")):
        if isinstance(value, str) and value:
            return Path(os.path.normpath(value))
    return Path.cwd()


def judged_names(judges: Iterable[Judge]) -> list[str]:
    """Short labels for messages."""
    return [f"{j.directory}/{j.name}" if j.name else f"{j.directory}/*" for j in judges]
