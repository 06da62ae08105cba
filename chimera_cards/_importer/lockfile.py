"""The lockfile: which exact bundle each skill name is pinned to, as text a person can review.

Format (like go.sum): one ``NAME digest:DIGEST`` per line, the bundle digest (every file of the
skill, its path and executable bit: see docs/bundles.md), prefixed as ``chimera-cards hash``
prints it. Older lockfiles wrote the hash bare: a bare pin is read as before, matching the bundle
digest or, as lockfiles written before bundles pinned, the SKILL.md SHA-256 of a one-file bundle
(so any file beside it is drift); a ``digest:`` pin matches the bundle digest only. Names sorted,
``#`` comments and blank lines ignored. ``read_lockfile`` refuses anything else with the line
number, and a name listed twice (two pins for one name is a merge accident, not a choice).
``write_lockfile`` writes atomically so a crash never leaves half a lockfile.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from chimera_cards._util.atomic import write_atomic
from chimera_cards.errors import ChimeraError, UsageError

DIGEST_PREFIX = "digest:"
_LINE = re.compile(r"(\S+)\s+(digest:)?([0-9a-fA-F]{64})")
HEADER = (
    "# chimera-cards lockfile: one skill per line, `name digest:DIGEST`, the bundle digest over\n"
    "# every file of the skill (docs/bundles.md); older lockfiles' bare hashes still read\n"
)


class Pins(dict[str, str]):
    """name -> pinned hash (lowercase hex), as read from a lockfile; ``bare`` holds the names
    whose pin was written without ``digest:`` (older lockfiles), which may be a SKILL.md hash."""

    def __init__(
        self, pins: Mapping[str, str] | None = None, *, bare: frozenset[str] = frozenset()
    ) -> None:
        super().__init__(pins or {})
        self.bare = bare


class LockfileError(ChimeraError):
    """A card's bytes are not what the lockfile pins (or the name is not pinned at all)."""


def parse_lockfile(text: str, *, source: str = "lockfile") -> Pins:
    """Parse lockfile text.

    Args:
        text: the lockfile's text.
        source: where it came from, for messages.
    Returns:
        The pins: name -> lowercase sha256 hex, with the names pinned by a bare hash in ``bare``.
    Raises:
        UsageError: a malformed line or a name listed twice, naming the line.
    """
    pins: dict[str, str] = {}
    bare: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.fullmatch(stripped)
        if not match:
            raise UsageError(
                f"{source}: line {number}: expected 'name digest:SHA256', got {stripped[:80]!r}"
            )
        name, digest = match.group(1), match.group(3).lower()
        if name in pins:
            raise UsageError(f"{source}: line {number}: {name} is listed twice")
        pins[name] = digest
        if match.group(2) is None:
            bare.add(name)
    return Pins(pins, bare=frozenset(bare))


def read_lockfile(path: str | os.PathLike) -> Pins:
    """Read and parse a lockfile.

    Args:
        path: the lockfile.
    Returns:
        Its pins (see ``parse_lockfile``).
    Raises:
        UsageError: missing, unreadable or malformed.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such lockfile") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read lockfile ({exc})") from None
    return parse_lockfile(text, source=str(path))


def format_lockfile(pins: Mapping[str, str]) -> str:
    """The lockfile text pinning each name to its bundle digest, names sorted.

    Args:
        pins: name -> bundle digest (hex).
    Returns:
        The text.
    """
    return HEADER + "".join(
        f"{name} {DIGEST_PREFIX}{pins[name].lower()}\n" for name in sorted(pins)
    )


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
        pins: name -> pinned hash (``Pins`` from a lockfile, or any mapping: every pin bare).
        name: the skill's name.
        digest: its bundle digest (every file, path and executable bit).
        source: the lockfile, for messages.
        legacy: for a bundle that is SKILL.md alone, its SKILL.md hash: what lockfiles written
            before bundles pinned, which pins exactly that one-file bundle. Only a bare pin
            (written without ``digest:``) may match it.
    """
    expected = pins.get(name)
    if expected is None:
        raise LockfileError(
            f"{name} is not in {source} (import without --lockfile, then "
            "`chimera-cards lock`, to add it)"
        )
    bare = name in pins.bare if isinstance(pins, Pins) else True
    if expected != digest and (legacy is None or not bare or expected != legacy):
        raise LockfileError(
            f"{name}: bundle digest {digest} does not match {source} ({expected}); "
            "some file of the skill differs from what was locked"
        )
