"""Plain ``--help`` (no click) prints exactly what click prints, at every terminal width.

Both console scripts run as real processes with COLUMNS set; the click screen comes from the
click group itself, run the same way.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chimera_cards._cli.plainhelp import short_help

BIN = Path(sys.executable).parent

CLICK = {
    "chimera-cards": "from chimera_cards._cli.app import main; main(prog_name='chimera-cards')",
    "reference-loop": "from reference_loop._cli.app import main; main(prog_name='reference-loop')",
}


def _screen(argv: list[str], columns: int) -> str:
    env = {**os.environ, "COLUMNS": str(columns)}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=True)
    return proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("prog", sorted(CLICK))
@pytest.mark.parametrize("columns", [50, 72, 80, 120])
def test_plain_help_is_clicks_help(prog, columns):
    plain = _screen([str(BIN / prog), "--help"], columns)
    clicks = _screen([sys.executable, "-c", CLICK[prog], "--help"], columns)
    assert plain == clicks
    assert _screen([str(BIN / prog), "-h"], columns) == clicks


def test_the_tables_name_every_command_with_its_help():
    from chimera_cards._cli.app import main as cards
    from chimera_cards._cli.table import GROUP_HELP as CARDS_HELP
    from reference_loop._cli.app import main as loop
    from reference_loop._cli.table import COMMAND_ROWS, GROUP_HELP

    assert loop.help == GROUP_HELP and cards.help == CARDS_HELP
    listed = {name: loop.get_command(None, name).help.split("\n\n")[0] for name in loop.commands}
    assert dict(COMMAND_ROWS) == {k: " ".join(v.split()) for k, v in listed.items()}


def test_short_help_cuts_as_click_does():
    text = "List the agents this tool can install for, with their project and user folders."
    assert short_help(text, 45) == "List the agents this tool can install for,..."
    assert short_help("One. Two.", 45) == "One."
    assert short_help("Compare e.g. arms.", 45) == "Compare e.g. arms."
