"""The ``reference-loop`` console entry: ``--version`` and ``--help`` without importing the loop.

The group's commands import the loop, the bench, the workspace engine and the verifier at module
level (their options are built from those modules' constants), so click's ``--help`` costs
several times a bare interpreter start. The screens are read off the click commands by
``tools/derive_cli.py`` into ``derived.py`` and answered as ``chimera-cards`` answers its own
(``chimera_cards._cli.entry.answer``); anything else goes to click.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

PROG = "reference-loop"


def run(argv: Sequence[str] | None = None, prog_name: str | None = None) -> None:
    """Run ``reference-loop`` with ``argv`` (default ``sys.argv[1:]``).

    Args:
        argv: the arguments after the program name.
        prog_name: the name usage lines show (default: from ``sys.argv[0]``, as click does).
    """
    from chimera_cards._cli.entry import answer
    from reference_loop import __version__
    from reference_loop._cli import derived

    args = sys.argv[1:] if argv is None else list(argv)
    answer(derived, PROG, __version__, args, prog_name)
    from reference_loop._cli.app import main

    main(args=args, prog_name=prog_name)
