"""``python -m reference_loop``: the ``reference-loop`` command."""

from reference_loop._cli.entry import run

if __name__ == "__main__":
    run(prog_name="reference-loop")
