"""What every CLI module shares: error reporting, --store and --json, opening a store.

The click-free parts (the error line, the JSON text, opening the store) are ``_cli/plain.py``'s,
so the console entry's fast path reports exactly as the click commands do.
"""

from __future__ import annotations

import functools
import math
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from chimera_cards._cli.plain import error_report, json_text
from chimera_cards.errors import ChimeraError


def file_option(*decls: str, **attrs: Any) -> Callable:
    """An option that names a file (never a folder), as a Path."""
    return click.option(*decls, type=click.Path(dir_okay=False, path_type=Path), **attrs)


def folder_option(*decls: str, **attrs: Any) -> Callable:
    """An option that names a folder (never a file), as a Path."""
    return click.option(*decls, type=click.Path(file_okay=False, path_type=Path), **attrs)


store_option = file_option(
    "--store",
    "store_path",
    help="Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the XDG data dir).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
# What lint and scan print: lines for a reader, JSON, or SARIF 2.1.0 for code-scanning services.
report_format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "sarif"]),
    default="text",
    show_default=True,
)


class Seconds(click.ParamType):
    """A duration in seconds: a finite number above 0 (``inf``, ``nan`` and ``-1`` are refused)."""

    name = "seconds"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds <= 0:
            self.fail(f"{value!r}: give a finite number of seconds above 0", param, ctx)
        return seconds


SECONDS = Seconds()


def reports_errors(fn: Callable) -> Callable:
    """Turn a ChimeraError into one line on stderr and its exit code (never a traceback).

    A damaged or locked SQLite file mid-command is reported the same way, as a store problem.
    An OSError or ValueError that no lower layer turned into a ChimeraError (a path or value
    nobody anticipated) is one line too, exit 2; with ``CHIMERA_CARDS_DEBUG`` set (the test suite
    sets it) it propagates instead, so a bug is never hidden behind a tidy message
    (``plain.error_report``).
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ChimeraError, sqlite3.Error, OSError, ValueError) as exc:
            if isinstance(exc, BrokenPipeError):  # the reader went away (`| head`): stay quiet
                from chimera_cards._cli.entry import quiet_streams

                quiet_streams()
                sys.exit(1)
            report = error_report(exc)
            if report is None:
                raise
            click.echo(report[0], err=True)
            sys.exit(report[1])

    return wrapper


def echo_json(value: Any) -> None:
    click.echo(json_text(value))


def runs_without_click(
    body: Callable[..., object], *, click_only: tuple[str, ...] = (), **bound: object
) -> Callable[[click.Command], click.Command]:
    """Mark a command whose work is ``body(**params, echo=echo)``: the console entry may run it
    without loading click (``_cli/entry.py``) when its arguments are plain, reading them by the
    parameters ``_cli/derive.py`` took off this very command.

    Args:
        body: the command's work; it takes the command's parameters (less ``click_only``, plus
            ``bound``) and ``echo``, raises as the command does and returns its exit code.
        click_only: parameters whose use sends the call to click (the body never sees them).
        bound: fixed arguments of the body, e.g. ``agent="claude"``.
    """

    def mark(command: click.Command) -> click.Command:
        target = f"{body.__module__}:{body.__qualname__}"
        command.without_click = (target, bound, click_only)  # type: ignore[attr-defined]
        return command

    return mark


def renamed(old: str, new: str, *, takes_value: bool = True) -> Callable[[Callable], Callable]:
    """An old spelling of an option, kept only to say its new name: ``old`` is hidden from
    ``--help`` and using it is a usage error naming ``new``.

    Args:
        old: the option as it was spelt (``--sha256``).
        new: what to use instead, as the message shows it (``--digest``).
        takes_value: whether the old option took a value (so ``--old VALUE`` reads as one).
    """

    def refuse(ctx: click.Context, param: click.Parameter, value: object) -> None:
        if value not in (None, False, ()):
            raise click.UsageError(f"{old} is now {new}", ctx)

    return click.option(
        old,
        f"_renamed_{old.strip('-').replace('-', '_')}",
        is_flag=not takes_value,
        default=None,
        hidden=True,
        expose_value=False,
        callback=refuse,
    )
