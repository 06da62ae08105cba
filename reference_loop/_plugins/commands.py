"""What ``reference-loop`` adds to the ``chimera-cards`` command: ``chimera-cards demo``.

Declared in pyproject.toml as an entry point in the ``chimera_cards.commands`` group, so
``chimera_cards`` lists and runs the demo without ever importing ``reference_loop`` itself. This
module stays tiny: ``chimera-cards --help`` imports it to learn the command's name and help.
"""

from __future__ import annotations

from typing import Any


def register_commands(cli: Any) -> None:
    """Add ``demo`` to the ``chimera-cards`` group ``cli``, loaded only when it runs.

    Args:
        cli: the click group; a ``ChimeraGroup`` takes the command lazily, any other group
            gets the command itself.
    """
    help_line = "Run the main job end to end in a throwaway folder, checking every step."
    if hasattr(cli, "add_lazy_command"):
        cli.add_lazy_command("demo", "reference_loop._cli.demo:demo", help_line)
    else:
        from reference_loop._cli.demo import demo

        cli.add_command(demo)
