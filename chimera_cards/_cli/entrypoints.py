"""The ``chimera_cards.commands`` entry points, read without importlib.metadata or click.

Importing ``importlib.metadata`` and parsing every distribution's metadata costs more than the
rest of ``--help`` together, so the ``entry_points.txt`` files on ``sys.path`` are read directly.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

PLUGIN_GROUP = "chimera_cards.commands"


def plugin_entry_points(group: str = PLUGIN_GROUP) -> Iterator[tuple[str, str]]:
    """(name, "module:function") of every installed entry point in ``group``, first dist wins.

    Reads ``entry_points.txt`` of the distributions on ``sys.path`` directly: importing
    ``importlib.metadata`` and parsing every distribution's metadata costs more than the rest of
    ``--help`` together.
    """
    header = f"[{group}]"
    seen: set[str] = set()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in sorted(names):
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            dist = (
                name.rsplit("-", 1)[0] if name.endswith(".dist-info") else name[: -len(".egg-info")]
            )
            dist = dist.split("-", 1)[0].lower().replace("_", "-")
            if dist in seen:
                continue
            seen.add(dist)
            try:
                text = (Path(entry or ".") / name / "entry_points.txt").read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if header in text:
                yield from _section(text, header)


def _section(text: str, header: str) -> Iterator[tuple[str, str]]:
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            inside = line == header
        elif inside and "=" in line and not line.startswith(("#", ";")):
            key, _, value = line.partition("=")
            yield key.strip(), value.strip()
