"""CLI for putting approved skills where agents read them: agents, path (and, as they land,
install, uninstall, check, sync, update, outdated).

Thin click skins over ``agents`` and ``install``; the decisions live there.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from chimera_cards.agents import agent_locations, find_agent, project_dir, user_dir
from chimera_cards.cli.common import echo_json, json_option, reports_errors, store_option
from chimera_cards.errors import UsageError
from chimera_cards.store import default_store_path


def target_dir(to: Path | None, agent: str | None, global_: bool, root: Path | None = None) -> Path:
    """The skills folder named by ``--to`` or ``--agent [--global]`` (exactly one of them)."""
    if (to is None) == (agent is None):
        raise UsageError("give exactly one of --to DIR or --agent AGENT")
    if to is not None:
        if global_:
            raise UsageError("--global goes with --agent, not --to")
        return to
    found = find_agent(agent or "")
    return user_dir(found) if global_ else project_dir(found, root or Path.cwd())


@click.command("agents")
@json_option
@reports_errors
def agents_cmd(as_json) -> None:
    """List the agents this tool can install for, with their project and user skill folders.

    A `*` marks the agents detected on this machine (their home folder exists).
    """
    found = agent_locations(os.environ, Path("."))
    if as_json:
        echo_json([a.to_dict() for a in found])
        return
    width = max(len(a.name) for a in found)
    for a in found:
        mark = "*" if a.detected else " "
        click.echo(f"{mark} {a.name:<{width}}  {a.project:<20} {a.user or '-'}")


@click.command("path")
@click.option("--agent", default=None, help="Print this agent's skills folder instead.")
@click.option("--global", "global_", is_flag=True, help="With --agent: its user-wide folder.")
@store_option
@reports_errors
def path_cmd(agent, global_, store_path) -> None:
    """Print where the store lives (or, with --agent, where that agent reads skills)."""
    if agent is None:
        if global_:
            raise UsageError("--global goes with --agent")
        click.echo(str(store_path or default_store_path()))
        return
    click.echo(str(target_dir(None, agent, global_)))


COMMANDS = [agents_cmd, path_cmd]
