"""What every CLI module shares: error reporting, --store and --json, opening a store."""

from __future__ import annotations

import functools
import json
import math
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from chimera_cards.errors import ChimeraError
from chimera_cards.store import Store, default_store_path

store_option = click.option(
    "--store",
    "store_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the XDG data dir).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


DEBUG_ENV = "CHIMERA_CARDS_DEBUG"


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
    nobody anticipated) is one line too, exit 2; with ``CHIMERA_CARDS_DEBUG`` set (the test
    suite sets it) it propagates instead, so a bug is never hidden behind a tidy message.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ChimeraError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except sqlite3.Error as exc:
            click.echo(f"error: store: {exc}", err=True)
            sys.exit(1)
        except (OSError, ValueError) as exc:
            if os.environ.get(DEBUG_ENV):
                raise
            text = " ".join(str(exc).split()) or exc.__class__.__name__
            click.echo(
                f"error: {text} ({exc.__class__.__name__}; {DEBUG_ENV}=1 shows where)", err=True
            )
            sys.exit(2)

    return wrapper


def open_store(store_path: Path | None, *, create: bool = False) -> Store:
    # Readers never create a store: verifying a mistyped path must not report an empty "ok".
    return Store(store_path or default_store_path(), create=create)


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, sort_keys=False, default=str))
