"""``python -m reference_loop``: the ``reference-loop`` command."""

from reference_loop.cli.app import main

if __name__ == "__main__":
    main(prog_name="reference-loop")
