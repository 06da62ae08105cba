"""Write what the console entries answer without click, and the CLI reference, from the commands.

    python tools/derive_cli.py            # rewrite the files that changed
    python tools/derive_cli.py --check    # exit 1 naming each stale file (the test suite runs it)

Writes ``chimera_cards/_cli/derived.py`` and ``reference_loop/_cli/derived.py`` (each command's
help screen, the ``--version`` line, the parameters of the commands that run without click: see
``chimera_cards/_cli/derive.py``) and ``docs/cli.md`` (every command's ``--help``). Run it after
changing a command's options or help.
"""

from __future__ import annotations

import sys
from pathlib import Path

from chimera_cards import __version__
from chimera_cards._cli.app import main as cards
from chimera_cards._cli.derive import Derived, module_text, reference_text
from chimera_cards._cli.entrypoints import PLUGIN_GROUP
from reference_loop._cli.app import main as loop

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = "python tools/derive_cli.py"


def outputs() -> dict[Path, str]:
    """Each file this script writes, with the text it should hold."""
    found = [
        (
            ROOT / "chimera_cards" / "_cli" / "derived.py",
            Derived(cards, "chimera-cards", __version__, PLUGIN_GROUP),
        ),
        (
            ROOT / "reference_loop" / "_cli" / "derived.py",
            Derived(loop, "reference-loop", __version__, None),
        ),
    ]
    texts = {path: module_text(derived, GENERATOR) for path, derived in found}
    texts[ROOT / "docs" / "cli.md"] = reference_text([d for _, d in found], GENERATOR)
    return texts


def main(argv: list[str]) -> int:
    stale = []
    for path, text in outputs().items():
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old == text:
            continue
        stale.append(path)
        if "--check" not in argv:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale and "--check" in argv:
        names = ", ".join(str(p.relative_to(ROOT)) for p in stale)
        print(f"error: stale: {names} (run {GENERATOR})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
