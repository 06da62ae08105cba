"""Skill folders that are links: where they lead, and whether that is inside the boundary.

npx's default install keeps one copy under ``.agents/skills/NAME`` and makes every other agent's
``NAME`` a link to it, so the bytes an agent reads are the link's target. A link is followed only
to a folder inside its boundary: the project (or, for a user folder, the user's home). One that
leads anywhere else is reported and never read, so a check cannot be steered into hashing (or an
install into writing) an arbitrary folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LinkInfo:
    """One entry of a skills folder, resolved."""

    entry: Path  # the entry as listed
    target: Path | None  # the folder to read (the entry itself when it is no link); None: none
    link: str | None = None  # the link's text, when the entry is a link
    shown: str | None = None  # where it leads, relative to the boundary when inside it
    inside: bool = True  # a link's target is inside the boundary
    dangling: bool = False  # a link to nothing (or to something that is not a folder)

    def describe(self) -> str:
        """Why the entry cannot be read, for a report line."""
        if self.link is None:
            return ""
        if not self.inside:
            where = f"-> {self.shown}"
            return f"links outside the project or to a folder holding it ({where}); not followed"
        if self.dangling:
            return f"link to nothing that is a folder (-> {self.link})"
        return ""


def is_inside(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """Whether the real ``path`` is ``root`` or under it (both resolved)."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def boundary_for(directory: str | os.PathLike, env: Mapping[str, str] | None = None) -> Path:
    """The folder a link in ``directory`` may lead into: the deepest of the current directory
    and the user's home that holds ``directory``; otherwise the folder two levels up
    (``PROJECT`` of ``PROJECT/.claude/skills``).

    Args:
        directory: a skills folder.
        env: the environment (``HOME``; default ``os.environ``).
    Returns:
        The boundary, absolute.
    """
    env = os.environ if env is None else env
    directory = Path(os.path.abspath(directory))
    candidates = [Path.cwd()]
    if env.get("HOME"):
        candidates.append(Path(env["HOME"]))
    holding = [c for c in candidates if is_inside(directory, c) and c != Path("/")]
    if holding:
        return max(holding, key=lambda c: len(os.path.realpath(c)))
    # Never the file system's root: a link could then lead anywhere.
    for guess in (directory.parent.parent, directory.parent, directory):
        if os.path.realpath(guess) != os.sep:
            return guess
    return directory


def resolve_entry(entry: Path, boundary: str | os.PathLike) -> LinkInfo:
    """Resolve one entry of a skills folder against its boundary.

    Args:
        entry: ``DIR/NAME``.
        boundary: from ``boundary_for``.
    Returns:
        Its LinkInfo; ``target`` is the resolved folder only for a link inside the boundary to a
        folder (and the entry itself for a folder that is no link).
    """
    if not entry.is_symlink():
        return LinkInfo(entry, entry)
    try:
        text = os.readlink(entry)
    except OSError:
        return LinkInfo(entry, None, link="?", dangling=True)
    real = Path(os.path.realpath(entry))
    base = Path(os.path.realpath(boundary))
    # Inside a boundary that is not the file system's root, and not a folder holding the
    # skills folder itself (the project, or a parent of it: far more than one skill).
    inside = str(base) != os.sep and is_inside(real, base)
    holds_us = is_inside(entry.parent, real)
    shown = os.path.relpath(real, base) if inside else str(real)
    if not inside or holds_us:
        return LinkInfo(entry, None, text, shown, inside=False)
    if not real.is_dir():
        return LinkInfo(entry, None, text, shown, dangling=True)
    return LinkInfo(entry, real, text, shown)


def link_text(target: Path, directory: Path) -> str:
    """The relative text of a link in ``directory`` that leads to ``target`` (as npx writes
    it: ``../../.agents/skills/NAME``)."""
    return os.path.relpath(os.path.abspath(target), os.path.abspath(directory))
