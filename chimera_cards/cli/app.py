"""The ``chimera-cards`` group: each area keeps its commands in its own module and exports them
as ``COMMANDS``; this module only assembles them (errors are reported by ``common.reports_errors``).
"""

from __future__ import annotations

import importlib

import click

from chimera_cards import __version__

# Modules that contribute commands. Each exposes COMMANDS: list[click.Command].
_COMMAND_MODULES = ("lint", "store", "review", "install", "demo")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="chimera-cards")
def main() -> None:
    """Skill cards as dependencies: lint, hash, import, review, approve, retrieve."""


for _name in _COMMAND_MODULES:
    _mod = importlib.import_module(f"chimera_cards.cli.{_name}")
    for _cmd in getattr(_mod, "COMMANDS", []):
        main.add_command(_cmd)
