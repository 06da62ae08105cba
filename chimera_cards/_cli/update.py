"""CLI for keeping installed skills current: update, outdated.

Thin click skins over ``update``; they fetch over the network, so they live apart from
``cli/install.py``, whose ``check`` must start fast.
"""

from __future__ import annotations

import click

from chimera_cards._cli.common import SECONDS, echo_json, json_option, reports_errors, store_option
from chimera_cards._cli.plain import open_store
from chimera_cards._importer.update import outdated, update
from chimera_cards._sources.fetch import DEFAULT_TIMEOUT


def _timeout_option(fn):
    return click.option(
        "--timeout",
        type=SECONDS,
        default=DEFAULT_TIMEOUT,
        show_default=True,
        help="Seconds allowed for each fetch.",
    )(fn)


@click.command("update")
@click.argument("names", nargs=-1)
@_timeout_option
@store_option
@json_option
@reports_errors
def update_cmd(names, timeout, store_path, as_json) -> None:
    """Re-fetch each skill (default: all) from its recorded origin and import what changed.

    New bytes become a new version, held pending like any network import; `review NAME` shows
    the per-file diff against the approved one. Exit 1 if an origin could not be fetched, or
    went back to bytes that must not be used (downgrade, rejected).
    """
    with open_store(store_path) as store:
        results = update(store, names or None, timeout=timeout)
    _print_updates(results, as_json)
    if any(r.state == "error" or r.refused for r in results):
        raise SystemExit(1)


@click.command("outdated")
@click.argument("names", nargs=-1)
@_timeout_option
@store_option
@json_option
@reports_errors
def outdated_cmd(names, timeout, store_path, as_json) -> None:
    """List the skills (default: all) whose origin now holds bytes the store does not have.

    Nothing is imported. Exit 1 when something changed upstream (or could not be fetched).
    """
    with open_store(store_path) as store:
        results = outdated(store, names or None, timeout=timeout)
    _print_updates(results, as_json)
    if any(r.state != "current" for r in results):
        raise SystemExit(1)


def _print_updates(results, as_json: bool) -> None:
    if as_json:
        echo_json([r.to_dict() for r in results])
        return
    for r in results:
        click.echo(r.line())


COMMANDS = [update_cmd, outdated_cmd]
