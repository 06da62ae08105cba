"""Helpers shared by every CLI module: error reporting and JSON output."""

from __future__ import annotations

import functools
import json
import sys
from typing import Any, Callable

import click

from chimera_cards.errors import ChimeraError


def reports_errors(fn: Callable) -> Callable:
    """Turn a ChimeraError into one line on stderr and its exit code (never a traceback)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ChimeraError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)

    return wrapper


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, sort_keys=False, default=str))
