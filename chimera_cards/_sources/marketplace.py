"""Claude Code plugin marketplaces: which skills of a repository belong to which plugin.

A marketplace repository has ``.claude-plugin/marketplace.json`` at its top, listing plugins by
``name`` and ``source`` (a ``./`` path inside the repository, below ``metadata.pluginRoot`` when
that is set); a plugin folder may carry its own ``.claude-plugin/plugin.json``. As Claude Code
loads them, a plugin's skills are the folders below its ``skills/`` plus any folder its
``skills`` list names (in marketplace.json or plugin.json). A repository that is one plugin has
only ``.claude-plugin/plugin.json`` at its top. Skills that no plugin lists (templates,
examples) are not part of the marketplace and are not imported from it.

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


class MarketplaceError(ChimeraError):
    """A marketplace or plugin manifest that cannot be read as one."""


@dataclass(frozen=True)
class Plugin:
    """One plugin: its name, its folder inside the repository, the skill folders it lists."""

    name: str
    folder: str  # "" = the repository's top
    listed: tuple[str, ...] = ()  # skill folders named by a `skills` list

    def owns(self, root: str) -> bool:
        """Whether the skill folder ``root`` belongs to this plugin."""
        if root in self.listed:
            return True
        skills = posixpath.join(self.folder, "skills") if self.folder else "skills"
        return root.startswith(skills + "/")


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
    return tuple(out)


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
            source = raw.get("source", "./")
            rel = _relative(source)
            if rel is None:
                continue  # a plugin hosted elsewhere (a git or npm source): not in this tree
            folder = posixpath.normpath(posixpath.join(root, rel)) if root else rel
            folder = "" if folder == "." else folder
            listed = _listed(folder, raw.get("skills"))
            own = read(posixpath.join(folder, PLUGIN_FILE) if folder else PLUGIN_FILE)
            if own is not None:
                doc_own = _load(own, f"{label}{folder}/{PLUGIN_FILE}")
                listed += _listed(folder, doc_own.get("skills"))
            plugins.append(Plugin(raw["name"], folder, listed))
    elif (single := read(PLUGIN_FILE)) is not None:
        doc = _load(single, f"{label}{PLUGIN_FILE}")
        if not isinstance(doc.get("name"), str):
            raise MarketplaceError(f"{label}{PLUGIN_FILE}: a plugin without a name")
        plugins.append(Plugin(doc["name"], "", _listed("", doc.get("skills"))))
    else:
        return None
    names = [p.name for p in plugins]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise MarketplaceError(f"{label}{MARKETPLACE_FILE}: plugin {twice[0]!r} is listed twice")
    return plugins


def assign(roots: Iterable[str], plugins: list[Plugin]) -> dict[str, str]:
    """Which plugin each skill folder belongs to; folders no plugin owns are left out.

    Args:
        roots: skill folder paths inside the repository.
        plugins: from ``read_plugins``.
    Returns:
        folder -> plugin name (the first plugin, in marketplace order, that owns it).
    """
    out: dict[str, str] = {}
    for root in roots:
        for plugin in plugins:
            if plugin.owns(root):
                out[root] = plugin.name
                break
    return out
