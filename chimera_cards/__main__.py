"""``python -m chimera_cards``: the ``chimera-cards`` command."""

from chimera_cards._cli.entry import run

if __name__ == "__main__":
    run(prog_name="chimera-cards")
