"""What every CLI module shares: error reporting, the --store and --json options, opening a store."""

from __future__ import annotations

import functools
import json
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


def reports_errors(fn: Callable) -> Callable:
    """Turn a ChimeraError into one line on stderr and its exit code (never a traceback).

    A damaged or locked SQLite file mid-command is reported the same way, as a store problem.
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

    return wrapper


def open_store(store_path: Path | None, *, create: bool = False) -> Store:
    # Readers never create a store: verifying a mistyped path must not report an empty "ok".
    return Store(store_path or default_store_path(), create=create)


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, sort_keys=False, default=str))
