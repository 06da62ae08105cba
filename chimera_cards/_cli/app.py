"""The ``chimera-cards`` group: the table of its commands, each loaded only when it runs.

Each area keeps its commands in its own module (``cli/lint.py``, ``cli/store.py``,
``cli/review.py``); ``cli/table.py`` names them (without click, so plain ``--help`` can read it
too). To add a command, add one row to ``COMMAND_TABLE`` there (a test checks the rows agree).
Commands from other packages come in through the ``chimera_cards.commands`` entry points
(``reference-loop`` registers ``demo`` there), so this package never imports them.
"""

from __future__ import annotations

import click

from chimera_cards import __version__
from chimera_cards._cli.group import ChimeraGroup, LazyCommand
from chimera_cards._cli.table import COMMAND_TABLE, GROUP_HELP

COMMANDS: dict[str, LazyCommand] = {
    name: LazyCommand(target, short_help) for name, target, short_help in COMMAND_TABLE
}


@click.group(
    cls=ChimeraGroup,
    lazy=COMMANDS,
    plugins=True,
    help=GROUP_HELP,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="chimera-cards")
def main() -> None:
    """Skill cards as dependencies: lint, hash, import, review, approve, retrieve."""
