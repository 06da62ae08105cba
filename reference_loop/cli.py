"""The ``reference-loop`` command (filled in by the loop issue)."""

from __future__ import annotations

import click

from reference_loop import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="reference-loop")
def main() -> None:
    """The reference carry-the-failure-forward retry loop."""
