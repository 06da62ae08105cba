"""``python -m chimera_cards``: the ``chimera-cards`` command."""

from chimera_cards.cli import main

if __name__ == "__main__":
    main(prog_name="chimera-cards")
