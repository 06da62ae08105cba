"""The ``reference-loop`` console entry: ``--help`` of the group without importing the loop.

The group's commands import the loop, the bench, the workspace engine and the verifier at module
level (their options are built from those modules' constants), so click's ``--help`` cost several
times a bare interpreter start. The group's help screen is fixed text (``cli/table.py``), laid
out as click lays it out (``chimera_cards._cli.plainhelp``); anything else goes to click.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence


def run(argv: Sequence[str] | None = None, prog_name: str | None = None) -> None:
    """Run ``reference-loop`` with ``argv`` (default ``sys.argv[1:]``).

    Args:
        argv: the arguments after the program name.
        prog_name: the name usage lines show (default: from ``sys.argv[0]``, as click does).
    """
    from chimera_cards._cli.plainhelp import render_group_help, wants_plain_help
    from reference_loop._cli.table import COMMAND_ROWS, GROUP_HELP, OPTION_ROWS, PROG

    args = sys.argv[1:] if argv is None else list(argv)
    shown = prog_name if prog_name is not None else os.path.basename(sys.argv[0] or "")
    if wants_plain_help(args) and shown == PROG:
        sys.stdout.write(render_group_help(PROG, GROUP_HELP, OPTION_ROWS, COMMAND_ROWS))
        sys.stdout.flush()
        return
    from reference_loop._cli.app import main

    main(args=args, prog_name=prog_name)
