"""Claude Code plugin marketplaces: which skills of a repository each plugin exposes.

A marketplace repository has ``.claude-plugin/marketplace.json`` at its top, listing plugins by
``name`` and ``source`` (a ``./`` path inside the repository, below ``metadata.pluginRoot`` when
that is set); a plugin folder may carry its own ``.claude-plugin/plugin.json``. A repository
that is one plugin has only ``.claude-plugin/plugin.json`` at its top.

Which skills a plugin exposes is what Claude Code (2.1) loads for it, read from its plugin
loader and checked by installing plugins from local marketplaces with the real CLI
(``tests/chimera_cards/_sources/test_claude_plugins.py``):

- the plugin's ``skills/`` folder: each sub-folder holding ``SKILL.md`` (one level only);
- plus each path a ``skills`` list names (the marketplace entry's and, for a strict plugin, its
  plugin.json's): a folder holding ``SKILL.md`` is one skill, any other folder gives each of its
  sub-folders holding ``SKILL.md``; a file, a missing path or one leaving the plugin is skipped;
- except for a plugin whose source is the marketplace's own top (``./``): when its entry lists
  skills, it exposes only those, not the whole ``skills/`` folder it shares with the other
  plugins there (anthropics/skills: ``document-skills`` is its four, not all seventeen);
- a plugin with neither a ``skills/`` folder nor a list, whose own top holds ``SKILL.md``, is
  that one skill;
- a plugin marked ``"strict": false`` whose plugin.json and marketplace entry both name
  components is refused by Claude Code as conflicting: it exposes nothing.

A skill may belong to several plugins (two entries listing it); skills no plugin exposes
(templates, examples) are not part of the marketplace and are not imported from it.

Pure: the manifests come in as bytes, so a folder, an archive and a git commit are read alike.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from chimera_cards.errors import ChimeraError

MARKETPLACE_FILE = ".claude-plugin/marketplace.json"
PLUGIN_FILE = ".claude-plugin/plugin.json"
# Keys of a marketplace entry that name components (Claude Code's conflict test).
_COMPONENT_KEYS = ("commands", "agents", "skills", "hooks", "outputStyles", "themes")


class MarketplaceError(ChimeraError):
    """A marketplace or plugin manifest that cannot be read as one."""


@dataclass(frozen=True)
class Plugin:
    """One plugin: its name, its folder inside the repository, and how Claude Code finds its
    skills there."""

    name: str
    folder: str  # "" = the repository's top
    listed: tuple[str, ...] = ()  # folders named by a `skills` list (repository paths)
    default: bool = True  # whether its `skills/` folder is read
    refused: str = ""  # why Claude Code does not load the plugin at all ("" = it does)

    @property
    def skills_dir(self) -> str:
        return posixpath.join(self.folder, "skills") if self.folder else "skills"

    def exposes(self, roots: Iterable[str]) -> list[str]:
        """The skill folders, among ``roots`` (every folder of the tree holding ``SKILL.md``),
        that Claude Code loads for this plugin, in the order of ``roots``."""
        roots = list(roots)
        if self.refused:
            return []
        have = set(roots)
        places = list(self.listed)
        if self.default:
            places.append(self.skills_dir)
        if not self.listed and self.folder in have:
            places.append(self.folder)  # no list, and its top holds SKILL.md: it is one skill
        chosen: set[str] = set()
        for place in places:
            if place in have:
                chosen.add(place)
            else:
                chosen.update(r for r in roots if posixpath.dirname(r) == place)
        return [r for r in roots if r in chosen]


def _relative(path: object) -> str | None:
    """A manifest's relative path (``./x`` or ``x``) as a clean folder path inside the
    repository, or None for anything else (absolute, a URL, one that climbs out)."""
    if not isinstance(path, str) or not path or "://" in path or path.startswith(("/", "~")):
        return None
    clean = posixpath.normpath(path)
    if clean == ".":
        return ""
    if clean.startswith(("..", "/")):
        return None
    return clean


def _is_top(source: object) -> bool:
    """Whether a plugin's source is the marketplace's own top (``./``, ``.``), as Claude Code
    tests it: every segment empty or ``.``."""
    if not isinstance(source, str):
        return False
    return all(part in ("", ".") for part in source.replace("\\", "/").split("/"))


def _load(data: bytes, where: str) -> dict:
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        raise MarketplaceError(f"{where}: not valid JSON") from None
    if not isinstance(doc, dict):
        raise MarketplaceError(f"{where}: not a JSON object")
    return doc


def _listed(base: str, skills: object) -> tuple[str, ...]:
    if isinstance(skills, str):
        skills = [skills]
    if not isinstance(skills, list):
        return ()
    out = []
    for item in skills:
        rel = _relative(item)
        if rel is not None:
            out.append(posixpath.normpath(posixpath.join(base, rel)) if base else rel)
    return tuple(dict.fromkeys(out))


def manifest_paths(paths: Iterable[str]) -> list[str]:
    """The manifest files among a tree's paths (what ``read_plugins`` wants to see).

    Args:
        paths: every file path of the tree, POSIX, relative.
    Returns:
        The paths of marketplace.json and of every plugin.json.
    """
    return [
        p for p in paths if p in (MARKETPLACE_FILE, PLUGIN_FILE) or p.endswith("/" + PLUGIN_FILE)
    ]


def _entry_plugin(raw: dict, folder: str, own: dict | None, where: str) -> Plugin:
    """One marketplace entry as Claude Code loads it (``own``: the plugin's plugin.json)."""
    name = raw["name"]
    entry_listed = _listed(folder, raw.get("skills")) if raw.get("skills") else ()
    own_listed = _listed(folder, own.get("skills")) if own is not None and own.get("skills") else ()
    if own is not None and raw.get("strict") is False and any(raw.get(k) for k in _COMPONENT_KEYS):
        return Plugin(
            name,
            folder,
            refused=(
                f"{where}: plugin {name!r} is not strict and both its plugin.json and its "
                "marketplace entry name components: Claude Code refuses it as conflicting"
            ),
        )
    skills_dir = posixpath.join(folder, "skills") if folder else "skills"
    if _is_top(raw.get("source", "./")) and entry_listed:
        # The entry's list replaces the shared skills/ folder, unless it names that folder (or
        # the plugin's top) itself.
        default = any(p in (skills_dir, folder) for p in entry_listed)
        kept = tuple(p for p in entry_listed if p not in (skills_dir, folder))
        return Plugin(name, folder, kept, default)
    listed = tuple(dict.fromkeys(p for p in own_listed + entry_listed if p != skills_dir))
    return Plugin(name, folder, listed, True)


def read_plugins(read: Callable[[str], bytes | None], where: str = "") -> list[Plugin] | None:
    """The plugins a repository's manifests describe, or None when it is no marketplace.

    Args:
        read: path inside the tree -> that file's bytes, or None when there is none (a dict's
            ``get`` over a tree's ``manifest_paths``, or a reader of a folder).
        where: what to name in error messages.
    Returns:
        The plugins in marketplace order; None when the tree has neither a marketplace.json nor a
        plugin.json at its top.
    Raises:
        MarketplaceError: a manifest that is not JSON, a plugin without a name, two of one name.
    """
    label = f"{where}:" if where else ""
    top = read(MARKETPLACE_FILE)
    plugins: list[Plugin] = []
    if top is not None:
        doc = _load(top, f"{label}{MARKETPLACE_FILE}")
        meta = doc["metadata"] if isinstance(doc.get("metadata"), dict) else {}
        root = _relative(meta["pluginRoot"]) if meta.get("pluginRoot") else ""
        if root is None:
            raise MarketplaceError(f"{label}{MARKETPLACE_FILE}: pluginRoot leaves the repository")
        raw_plugins = doc.get("plugins")
        if not isinstance(raw_plugins, list):
            raise MarketplaceError(f"{label}{MARKETPLACE_FILE}: needs a 'plugins' list")
        for raw in raw_plugins:
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
                raise MarketplaceError(f"{label}{MARKETPLACE_FILE}: a plugin without a name")
            rel = _relative(raw.get("source", "./"))
            if rel is None:
                continue  # a plugin hosted elsewhere (a git or npm source): not in this tree
            folder = posixpath.normpath(posixpath.join(root, rel)) if root else rel
            folder = "" if folder == "." else folder
            own_bytes = read(posixpath.join(folder, PLUGIN_FILE) if folder else PLUGIN_FILE)
            own = None
            if own_bytes is not None:
                own = _load(own_bytes, f"{label}{folder or '.'}/{PLUGIN_FILE}")
            plugins.append(_entry_plugin(raw, folder, own, f"{label}{MARKETPLACE_FILE}"))
    elif (single := read(PLUGIN_FILE)) is not None:
        doc = _load(single, f"{label}{PLUGIN_FILE}")
        if not isinstance(doc.get("name"), str):
            raise MarketplaceError(f"{label}{PLUGIN_FILE}: a plugin without a name")
        listed = tuple(p for p in _listed("", doc.get("skills")) if p != "skills")
        plugins.append(Plugin(doc["name"], "", listed))
    else:
        return None
    names = [p.name for p in plugins]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise MarketplaceError(f"{label}{MARKETPLACE_FILE}: plugin {twice[0]!r} is listed twice")
    return plugins


def assign(roots: Iterable[str], plugins: list[Plugin]) -> dict[str, list[str]]:
    """Which plugins expose each skill folder; folders no plugin exposes are left out.

    Args:
        roots: every skill folder path inside the repository (folders holding ``SKILL.md``).
        plugins: from ``read_plugins``.
    Returns:
        folder -> the names of the plugins that expose it, in marketplace order.
    """
    roots = list(roots)
    out: dict[str, list[str]] = {}
    for plugin in plugins:
        for root in plugin.exposes(roots):
            out.setdefault(root, []).append(plugin.name)
    return {r: out[r] for r in roots if r in out}
