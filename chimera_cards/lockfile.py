"""The lockfile: which exact bundle each skill name is pinned to, as text a person can review.

Format (like go.sum): one ``NAME DIGEST`` per line, the bundle digest (every file of the skill,
its path and executable bit: see docs/bundles.md). A lockfile written before bundles pinned the
SKILL.md SHA-256 instead; such a pin still reads, and matches only the one-file bundle of exactly
that SKILL.md, so any file beside it is drift. Names sorted, ``#`` comments and blank
lines ignored. ``read_lockfile`` refuses anything else with the line number, and a name listed
twice (two pins for one name is a merge accident, not a choice). ``write_lockfile`` writes
atomically so a crash never leaves half a lockfile.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from chimera_cards.atomic import write_atomic
from chimera_cards.errors import ChimeraError, UsageError

_LINE = re.compile(r"(\S+)\s+([0-9a-fA-F]{64})")
HEADER = (
    "# chimera-cards lockfile: one skill per line, `name digest`, the bundle digest over every\n"
    "# file of the skill (docs/bundles.md); a lockfile that pinned SKILL.md's SHA-256 still reads\n"
)


class LockfileError(ChimeraError):
    """A card's bytes are not what the lockfile pins (or the name is not pinned at all)."""


def parse_lockfile(text: str, *, source: str = "lockfile") -> dict[str, str]:
    """Parse lockfile text into {name: lowercase sha256 hex}; raises UsageError naming the line."""
    pins: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.fullmatch(stripped)
        if not match:
            raise UsageError(
                f"{source}: line {number}: expected 'name sha256', got {stripped[:80]!r}"
            )
        name, digest = match.group(1), match.group(2).lower()
        if name in pins:
            raise UsageError(f"{source}: line {number}: {name} is listed twice")
        pins[name] = digest
    return pins


def read_lockfile(path: str | os.PathLike) -> dict[str, str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such lockfile") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read lockfile ({exc})") from None
    return parse_lockfile(text, source=str(path))


def format_lockfile(pins: Mapping[str, str]) -> str:
    return HEADER + "".join(f"{name} {pins[name]}\n" for name in sorted(pins))


def write_lockfile(path: str | os.PathLike, pins: Mapping[str, str]) -> None:
    """Write the lockfile atomically (temp file in the same directory, then rename)."""
    for name in pins:
        if not name or any(ch.isspace() for ch in name):
            raise ChimeraError(f"card name {name!r} cannot be written to a lockfile")
    write_atomic(Path(path), format_lockfile(pins).encode("utf-8"))


def check_pin(
    pins: Mapping[str, str],
    name: str,
    digest: str,
    *,
    source: str = "lockfile",
    legacy: str | None = None,
) -> None:
    """Raise LockfileError unless ``name`` is pinned to exactly this bundle. An unlisted name is
    refused too: with a lockfile, only what it lists may come in (like ``npm ci``).

    Args:
        pins: name -> pinned hash.
        name: the skill's name.
        digest: its bundle digest (every file, path and executable bit).
        source: the lockfile, for messages.
        legacy: for a bundle that is SKILL.md alone, its SKILL.md hash: what lockfiles written
            before bundles pinned, which pins exactly that one-file bundle.
    """
    expected = pins.get(name)
    if expected is None:
        raise LockfileError(
            f"{name} is not in {source} (import without --lockfile, then "
            "`chimera-cards lock`, to add it)"
        )
    if expected != digest and (legacy is None or expected != legacy):
        raise LockfileError(
            f"{name}: bundle digest {digest} does not match {source} ({expected}); "
            "some file of the skill differs from what was locked"
        )
